"""A run hears that a pair ended only from the pair's own close, never from a message.

A message anyone could send (the Web UI lists every signal a run handles) must not count a
running pair as done: it would free its slot, and score it, while its agent still runs.
"""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowFailureError

from durabench.models.pair import PairDone
from durabench.models.run import Control
from starter.approve import approve_main
from tests.workflows.fakes import SLOW
from tests.workflows.harness import Env, RunHandle, start_run, until
from workflows import SuiteRunWorkflow


@pytest.mark.parametrize("env", [[SLOW]], indirect=True)
async def test_a_pair_done_sent_by_hand_does_not_end_a_running_pair(env: Env) -> None:
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: (SLOW, "baseline") in env.rec.live, "the slow pair's agent runs")
    forged = PairDone(task_id=SLOW, by_class={"completed": 2})
    await handle.signal("pair_done", forged)
    # Signals are taken in the order sent: once the pause is taken, so was the forgery.
    await handle.signal(SuiteRunWorkflow.pause, Control(by="ann"))
    await until(lambda: _paused(handle), "the run takes the pause after the forged signal")
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.running, progress.done, progress.by_class) == ((SLOW,), 0, {})
    await handle.cancel()  # its sandboxes torn down before the worker stops
    with pytest.raises(WorkflowFailureError):
        await handle.result()


async def _paused(handle: RunHandle) -> bool:
    return (await handle.query(SuiteRunWorkflow.progress)).paused
