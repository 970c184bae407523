"""The run policy on a real dev server: the approval gate and live control."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import WorkflowUpdateFailedError

from durabench.models import Approval
from starter.approve import approve_main
from starter.control import pause_main, set_parallel_main
from starter.resume import resume_main
from tests.workflows.harness import Env, RunHandle, start_run, until
from workflows import SuiteRunWorkflow


def _refusal(err: pytest.ExceptionInfo[WorkflowUpdateFailedError]) -> str:
    return str(err.value.cause)


async def test_a_mismatched_approval_is_refused_at_the_caller_and_a_matching_one_taken(
    env: Env,
) -> None:
    request, handle = await start_run(env, parallel=2, model="m-1")
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await approve_main(request.run_id, "ann", client=env.client, model="m-2", parallel=8)
    assert "model is 'm-1' in the plan, the approval says 'm-2'" in _refusal(refused)
    assert "parallel is 2 in the plan, the approval says 8" in _refusal(refused)
    # A mismatched signal (Web UI, temporal CLI) is ignored: the run still waits.
    await handle.signal(SuiteRunWorkflow.approve, Approval(approver="bob", category="official"))
    await asyncio.sleep(0.5)
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.phase, progress.approved_by) == ("awaiting_approval", None)
    assert env.rec.calls == ["plan_run"]

    taken = await approve_main(
        request.run_id, "ann", client=env.client, model="m-1", suite="s", parallel=2
    )
    assert taken.approver == "ann" and taken.approved_at is not None
    with pytest.raises(WorkflowUpdateFailedError) as again:
        await approve_main(request.run_id, "carl", client=env.client)
    assert "already approved (by ann" in _refusal(again)
    assert (await handle.result()).status == "completed"


async def test_an_update_before_the_plan_says_to_wait_for_it(env: Env) -> None:
    env.rec.plan_gate = asyncio.Event()
    request, handle = await start_run(env, wait=False)
    await until(lambda: "plan_run" in env.rec.calls, "planning starts")
    with pytest.raises(WorkflowUpdateFailedError) as early:
        await handle.execute_update(SuiteRunWorkflow.approve_checked, Approval(approver="ann"))
    assert "has no plan yet" in _refusal(early)
    env.rec.plan_gate.set()
    await until(lambda: _phase(handle, "awaiting_approval"), "the run waits for approval")
    await approve_main(request.run_id, "ann", client=env.client)
    assert (await handle.result()).status == "completed"


async def _phase(handle: RunHandle, phase: str) -> bool:
    return (await handle.query(SuiteRunWorkflow.progress)).phase == phase


async def _done(handle: RunHandle, n: int) -> bool:
    return (await handle.query(SuiteRunWorkflow.progress)).done == n


@pytest.mark.parametrize("env", [[f"t{i}" for i in range(8)]], indirect=True)
async def test_pause_resume_and_set_parallel_change_what_starts(env: Env) -> None:
    env.rec.agent_gate = asyncio.Event()
    request, handle = await start_run(env, parallel=2)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: env.rec.in_agent == 4, "two pairs' agents run")

    assert await set_parallel_main(request.run_id, 4, client=env.client) == 2
    await until(lambda: env.rec.in_agent == 8, "four pairs' agents run")
    with pytest.raises(WorkflowUpdateFailedError) as bad:
        await handle.execute_update(SuiteRunWorkflow.set_parallel, 0)
    assert "parallel must be at least 1, not 0" in _refusal(bad)

    await pause_main(request.run_id, "ann", "quota check", client=env.client)
    env.rec.agent_gate.set()  # the running attempts finish...
    await until(lambda: _done(handle, 4), "the four running pairs finish while paused", tries=300)
    started = env.rec.calls.count("run_agent")
    await asyncio.sleep(1.0)  # ...and nothing new starts while paused
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.paused, progress.running, progress.done) == (True, (), 4)
    assert env.rec.calls.count("run_agent") == started == 8

    await set_parallel_main(request.run_id, 1, client=env.client)
    env.rec.max_live_pairs = 0
    await resume_main(request.run_id, client=env.client, detach=True, by="ann")
    outcome = await handle.result()
    assert outcome.status == "completed"
    assert env.rec.calls.count("run_agent") == 16
    assert env.rec.max_live_pairs == 1
