"""A pair that cannot say how it ended (terminated, reset away) does not hang its run.

The run hears every pair's close: a pair it started closes under its eyes (a child-closed
event); for pairs it carried across continue-as-new, ``await_pairs`` waits on the server.
Either way a terminated pair is recorded as ended unexplained (done, excluded), and the
run goes on to its report, or, cancelled, ends.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from durabench.models.run import RunRequest
from durabench.models.suite_run import RunOutcome
from starter.approve import approve_main
from tests.workflows.fakes import SLOW
from tests.workflows.harness import Env, start_run, until
from workflows import SuiteRunWorkflow, pair_workflow_id, run_workflow_id


async def _ended(env: Env, run_id: str) -> RunOutcome:
    """The run's outcome; before, it waited for the terminated pair forever."""
    handle = env.client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    await until(lambda: _closed(handle), "the run ended", tries=600)
    return await handle.result()


async def _closed(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await handle.describe()).close_time is not None


@pytest.mark.parametrize("env", [[SLOW, "t2"]], indirect=True)
async def test_a_terminated_pair_the_run_started_is_recorded_and_the_run_ends(env: Env) -> None:
    request, handle = await start_run(env, parallel=2)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: (SLOW, "baseline") in env.rec.live, "the slow pair's agent runs")
    pair = env.client.get_workflow_handle(pair_workflow_id(request.run_id, SLOW))
    await pair.terminate("an operator ended it by hand")
    outcome = await _ended(env, request.run_id)
    assert outcome.status == "completed"
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.done, progress.excluded, progress.running) == (2, 1, ())
    assert progress.ended_abnormally == (SLOW,)
    # Its attempts are cancelled by the pair's close policy: a cancel, then collect and
    # teardown, each a workflow task and an activity: slow on a loaded server.
    await until(lambda: not env.rec.live, "the terminated pair's sandboxes are torn down", 600)


@pytest.mark.parametrize("env", [[SLOW, "t2", "t3"]], indirect=True)
async def test_a_terminated_pair_carried_across_continue_as_new_is_found(env: Env) -> None:
    request, latest = await _carried_pair_terminated(env)
    outcome = await _ended(env, request.run_id)
    progress = await latest.query(SuiteRunWorkflow.progress)
    assert outcome.status == "completed"
    assert (progress.done, progress.excluded, progress.ended_abnormally) == (3, 1, (SLOW,))


@pytest.mark.parametrize("env", [[SLOW, "t2", "t3"]], indirect=True)
async def test_a_cancelled_run_hears_of_a_terminated_carried_pair(env: Env) -> None:
    """Cancelled while it waits for its next page, the run still hears its carried pairs
    close (the wait for them is not the run's main task, which the cancel stops)."""
    env.rec.page_gate = asyncio.Event()  # the second segment waits to read its page
    _, latest = await _carried_pair_terminated(env)
    await latest.cancel()
    await until(lambda: _closed(latest), "the cancelled run ended", tries=600)
    progress = await latest.query(SuiteRunWorkflow.progress)
    assert (await latest.describe()).status == WorkflowExecutionStatus.CANCELED
    assert (progress.ended_abnormally, progress.running) == ((SLOW,), ())


async def _carried_pair_terminated(env: Env) -> tuple[RunRequest, WorkflowHandle[Any, RunOutcome]]:
    """A run that carried the slow pair across continue-as-new; the pair terminated."""
    request, handle = await start_run(env, parallel=2, pairs_per_run=2)
    first = (await handle.describe()).run_id
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: _moved_on(env, request.run_id, first), "the run continued as new")
    await until(lambda: (SLOW, "baseline") in env.rec.live, "the slow pair's agent runs")
    pair = env.client.get_workflow_handle(pair_workflow_id(request.run_id, SLOW))
    await pair.terminate("an operator ended it by hand")
    return request, env.client.get_workflow_handle_for(SuiteRunWorkflow.run, handle.id)


async def _moved_on(env: Env, run_id: str, first: str) -> bool:
    desc = await env.client.get_workflow_handle(run_workflow_id(run_id)).describe()
    return desc.run_id != first
