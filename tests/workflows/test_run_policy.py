"""The run policy on a real dev server: the approval gate and live control."""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from temporalio.client import WorkflowUpdateFailedError

from durabench.models.agent import AgentSpec
from durabench.models.run import Approval
from runtime.embedded import temporal_cli
from starter.approve import approve_main
from starter.control import pause_main, set_parallel_main
from starter.resume import resume_main
from tests.workflows.harness import Env, RunHandle, refusal_after_signals, start_run, until
from tests.workflows.recording import record
from workflows import PairedTaskWorkflow, SuiteRunWorkflow, pair_workflow_id


def _refusal(err: pytest.ExceptionInfo[WorkflowUpdateFailedError]) -> str:
    return str(err.value.cause)


async def test_a_mismatched_approval_is_refused_at_the_caller_and_a_matching_one_taken(
    env: Env,
) -> None:
    request, handle = await start_run(env, parallel=2, agent=AgentSpec(model="m-1"))
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await approve_main(request.run_id, "ann", client=env.client, model="m-2", parallel=8)
    assert "model is 'm-1' in the plan, the approval says 'm-2'" in _refusal(refused)
    assert "parallel is 2 in the plan, the approval says 8" in _refusal(refused)
    # A mismatched signal (Web UI, temporal CLI) is ignored: the run still waits.
    await handle.signal(SuiteRunWorkflow.approve, Approval(approver="bob", category="official"))
    assert "approval refused" in await refusal_after_signals(handle)  # handled, not taken
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


async def test_an_approve_signal_for_another_model_is_not_taken(env: Env) -> None:
    """The Web UI's Submit sends the ``approve`` signal, which no validator guards.

    The plan runs m-1. A signal restating m-2, or m-1's dated snapshot m-1-20250929, is
    logged and ignored: the run still waits and has started nothing but its plan. The
    same signal restating m-1 is taken.
    """
    request, handle = await start_run(env, parallel=2, agent=AgentSpec(model="m-1"))
    for wrong in ("m-2", "m-1-20250929"):
        await handle.signal(SuiteRunWorkflow.approve, Approval(approver="web", model=wrong))
    assert "approval refused" in await refusal_after_signals(handle)  # handled, not taken
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.phase, progress.approved_by) == ("awaiting_approval", None)
    assert env.rec.calls == ["plan_run"]
    await handle.signal(SuiteRunWorkflow.approve, Approval(approver="web", model="m-1"))
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
    # ...and nothing new starts while paused: the run starts a pair in the very activation
    # that counts the last one done, so the state that shows 4 done would show it running.
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.paused, progress.running, progress.done) == (True, (), 4)
    assert env.rec.calls.count("run_agent") == 8

    await set_parallel_main(request.run_id, 1, client=env.client)
    env.rec.max_live_pairs = 0
    await resume_main(request.run_id, client=env.client, detach=True, by="ann")
    outcome = await handle.result()
    assert outcome.status == "completed"
    assert env.rec.calls.count("run_agent") == 16
    assert env.rec.max_live_pairs == 1


async def _arm_state(env: Env, run_id: str, lane: str) -> str | None:
    pair = env.client.get_workflow_handle_for(
        PairedTaskWorkflow.run, pair_workflow_id(run_id, "t1")
    )
    arms = {a.lane: a.state for a in (await pair.query(PairedTaskWorkflow.progress)).arms}
    return arms.get(lane)


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_pause_holds_an_arms_infra_retry_until_resume(env: Env) -> None:
    env.rec.classes["t1/baseline"] = ["infra_rate_limit", "completed"]
    env.rec.agent_gate = asyncio.Event()
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: env.rec.in_agent == 2, "both arms' agents run")
    await pause_main(request.run_id, "ann", client=env.client)
    env.rec.agent_gate.set()  # attempt 1 of the baseline arm ends infra; it would retry

    async def held() -> bool:
        return await _arm_state(env, request.run_id, "baseline") == "paused"

    await until(held, "the baseline arm holds its retry")  # it waits for resume, the test's signal
    assert env.rec.calls.count("run_agent") == 2
    await resume_main(request.run_id, client=env.client, detach=True)
    assert (await handle.result()).status == "completed"
    assert env.rec.calls.count("run_agent") == 3
    assert _classes(env) == {
        ("baseline", 1): "infra_rate_limit",
        ("baseline", 2): "completed",
        ("sourcegraph_full", 1): "completed",
    }
    await record(env.client, {"paired_task_paused_retry": pair_workflow_id(request.run_id, "t1")})


def _classes(env: Env) -> dict[tuple[str, int], str]:
    return {(a.lane, a.attempt): a.exit_class for a in env.rec.attempts}


def _temporal(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [temporal_cli(), "workflow", *args, "--address", address]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


async def _cli(address: str, wid: str, kind: str, name: str, given: str | None = None) -> str:
    """``temporal workflow signal`` or ``update execute`` of ``name``; its stderr on failure."""
    verb = ["update", "execute"] if kind == "update" else ["signal"]
    args = [*verb, "--workflow-id", wid, "--name", name]
    args += ["--input", given] if given is not None else []
    done = await asyncio.to_thread(_temporal, address, *args)
    return "" if done.returncode == 0 else done.stderr or f"exit {done.returncode}"


async def test_the_temporal_cli_speaks_the_same_policy(env: Env, temporal_address: str) -> None:
    request, handle = await start_run(env, parallel=1, agent=AgentSpec(model="m-1"))
    mismatch = await _cli(
        temporal_address, handle.id, "update", "approve", '{"approver": "cli", "model": "m-9"}'
    )
    assert "model is 'm-1' in the plan, the approval says 'm-9'" in mismatch
    ok = '{"approver": "cli", "model": "m-1"}'
    assert await _cli(temporal_address, handle.id, "update", "approve", ok) == ""
    assert await _cli(temporal_address, handle.id, "signal", "pause", '{"by": "cli"}') == ""

    async def paused_after_cli_approval() -> bool:
        progress = await handle.query(SuiteRunWorkflow.progress)
        return progress.paused and progress.approved_by == "cli"

    await until(paused_after_cli_approval, "the run is approved by cli and paused")
    assert await _cli(temporal_address, handle.id, "signal", "resume") == ""
    assert (await handle.result()).status == "completed"
