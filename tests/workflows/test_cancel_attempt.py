"""An operator's cancel of one attempt (Web UI, ``temporal workflow cancel``) ends that
attempt, on the record, and the pair decides what comes next: here, a new attempt."""

from __future__ import annotations

import asyncio

import pytest

from starter.approve import approve_main
from tests.workflows.harness import Env, start_run, until
from workflows import SuiteRunWorkflow, attempt_workflow_id


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_an_attempt_cancelled_by_hand_is_recorded_and_the_pair_goes_on(env: Env) -> None:
    agent = env.rec.gates["run_agent/t1/baseline"] = asyncio.Event()
    request, handle = await start_run(env, parallel=1, infra_retries=1)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: ("t1", "baseline") in env.rec.live, "the baseline agent runs")
    first = env.client.get_workflow_handle(attempt_workflow_id(request.run_id, "t1", "baseline", 1))
    await first.cancel()
    await until(lambda: any(a.lane == "baseline" for a in env.rec.attempts), "it is recorded")
    agent.set()  # the next attempt's agent runs through
    outcome = await handle.result()
    assert outcome.status == "completed"
    baseline = [(a.attempt, a.exit_class) for a in env.rec.attempts if a.lane == "baseline"]
    assert baseline == [(1, "infra_other"), (2, "completed")]
    cancelled = next(a for a in env.rec.attempts if a.attempt == 1 and a.lane == "baseline")
    assert "cancelled" in cancelled.reason
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.done, progress.excluded) == (1, 0)
