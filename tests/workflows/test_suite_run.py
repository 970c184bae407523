"""SuiteRunWorkflow on a real Temporal dev server, with recorded fake activities."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError

from durabench.models.agent import AgentSpec
from durabench.models.run import Approval
from durabench.models.suite_run import RunOutcome
from starter.approve import approve_main, reject_main
from tests.workflows.fakes import BUILD_FAILS, SLOW, VERIFY_FAILS
from tests.workflows.harness import Env, refusal_after_signals, start_run
from tests.workflows.recording import record
from workflows import SuiteRunWorkflow, attempt_workflow_id, pair_workflow_id, run_workflow_id


async def _approved_run(env: Env, **request: Any) -> RunOutcome:
    req, handle = await start_run(env, **request)
    await approve_main(req.run_id, "ann", client=env.client)
    outcome: RunOutcome = await handle.result()
    return outcome


def _by_attempt(env: Env) -> dict[tuple[str, str, int], str]:
    return {(a.task_id, a.lane, a.attempt): a.exit_class for a in env.rec.attempts}


async def test_run_waits_for_approval_then_runs_every_pair(env: Env) -> None:
    request, handle = await start_run(env, parallel=2)
    # Parked at the gate: still, once it has answered something after reaching it.
    assert "approval refused" in await refusal_after_signals(handle)
    assert env.rec.calls == ["plan_run"]
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.phase, progress.done, progress.total) == ("awaiting_approval", 0, 4)

    await approve_main(request.run_id, "ann", client=env.client)
    outcome: RunOutcome = await handle.result()

    assert outcome.status == "completed"
    assert env.rec.calls[:2] == ["plan_run", "record_run"]
    assert sorted(env.rec.provisioned) == sorted(env.rec.torn_down)
    assert len(env.rec.provisioned) == 8
    assert env.rec.max_live_pairs <= 2
    assert {(a.task_id, a.lane) for a in env.rec.attempts} == {
        (t, lane) for t in ["t1", "t2", "t3", "t4"] for lane in ("baseline", "sourcegraph_full")
    }
    assert all(a.exit_class == "completed" and a.reward == 1.0 for a in env.rec.attempts)
    final = await handle.query(SuiteRunWorkflow.progress)
    assert (final.phase, final.done, final.approved_by) == ("completed", 4, "ann")
    assert (final.by_class, final.excluded) == ({"completed": 8}, 0)
    await record(
        env.client,
        {
            "paired_task": pair_workflow_id(request.run_id, "t1"),
            "agent_run": attempt_workflow_id(request.run_id, "t1", "sourcegraph_full", 1),
        },
    )


async def test_reject_ends_the_run_before_anything_starts(env: Env) -> None:
    request, handle = await start_run(env)
    await reject_main(request.run_id, "wrong model", "bob", client=env.client)
    outcome = await handle.result()
    assert (outcome.status, outcome.reason) == ("rejected", "wrong model")
    assert env.rec.calls == ["plan_run"]


@pytest.mark.parametrize("env", [[BUILD_FAILS, VERIFY_FAILS, "t-ok"]], indirect=True)
async def test_failed_phases_end_attempts_not_the_run(env: Env) -> None:
    outcome = await _approved_run(env, parallel=3, infra_retries=1)
    assert outcome.status == "completed"
    by_task = {(a.task_id, a.lane, a.attempt): a for a in env.rec.attempts}
    build = by_task[(BUILD_FAILS, "baseline", 2)]
    assert build.exit_class == "infra_other" and "ImageBuildError" in build.reason
    assert "build.log" in build.reason
    # The harness could not verify a session that ran: excluded, and not bought again.
    verify = by_task[(VERIFY_FAILS, "baseline", 1)]
    assert verify.exit_class == "infra_other" and verify.reward is None
    assert "ConfigError" in verify.verifier_error and "could not be run" in verify.reason
    assert verify.session_began
    assert (VERIFY_FAILS, "baseline", 2) not in by_task
    assert by_task[("t-ok", "baseline", 1)].exit_class == "completed"
    # A failed build never provisioned; everything provisioned was torn down, and the
    # failed build's teardown ran too: it ends the attempt's claim on its host.
    assert all(t != BUILD_FAILS for t, _ in env.rec.provisioned)
    assert set(env.rec.provisioned) <= set(env.rec.torn_down)
    assert {t for t, _ in env.rec.torn_down} - {t for t, _ in env.rec.provisioned} == {BUILD_FAILS}
    # Non-retryable in place: each build and verify attempt ran once; the pair retried
    # each build once per lane, and no verify.
    assert env.rec.calls.count("prepare_image") == 2 * 2 + 2 + 2


@pytest.mark.parametrize("env", [["t-flaky", "t-capped", "t-slowpoke"]], indirect=True)
async def test_infra_arms_are_retried_and_exhausted_pairs_excluded(env: Env) -> None:
    env.rec.classes = {
        "t-flaky/baseline": ["infra_rate_limit", "completed"],
        "t-capped/sourcegraph_full": ["infra_usage_cap"],
        "t-slowpoke/baseline": ["model_timeout"],
    }
    outcome = await _approved_run(env, parallel=3, infra_retries=2)
    assert outcome.status == "completed"
    assert _by_attempt(env) == {
        ("t-flaky", "baseline", 1): "infra_rate_limit",
        ("t-flaky", "baseline", 2): "completed",
        ("t-flaky", "sourcegraph_full", 1): "completed",
        ("t-capped", "baseline", 1): "completed",
        ("t-capped", "sourcegraph_full", 1): "infra_usage_cap",
        ("t-capped", "sourcegraph_full", 2): "infra_usage_cap",
        ("t-capped", "sourcegraph_full", 3): "infra_usage_cap",
        ("t-slowpoke", "baseline", 1): "model_timeout",
        ("t-slowpoke", "sourcegraph_full", 1): "completed",
    }
    handle = env.client.get_workflow_handle_for(
        SuiteRunWorkflow.run, run_workflow_id(outcome.run_id)
    )
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert progress.excluded == 1
    assert progress.by_class["infra_usage_cap"] == 3
    await record(
        env.client,
        {
            "paired_task_infra_retry": pair_workflow_id(outcome.run_id, "t-flaky"),
            "agent_run_infra": attempt_workflow_id(outcome.run_id, "t-flaky", "baseline", 1),
        },
    )


@pytest.mark.parametrize("env", [[SLOW]], indirect=True)
async def test_cancelling_a_run_tears_down_every_sandbox(env: Env) -> None:
    request, handle = await start_run(env)
    await approve_main(request.run_id, "ann", client=env.client)
    while env.rec.calls.count("run_agent") < 2:
        await asyncio.sleep(0.1)
    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    for _ in range(100):
        if len(env.rec.torn_down) == 2:
            break
        await asyncio.sleep(0.1)
    assert sorted(env.rec.torn_down) == sorted(env.rec.provisioned)
    assert len(env.rec.provisioned) == 2


async def test_an_approval_before_the_plan_is_ignored(env: Env) -> None:
    env.rec.plan_gate = asyncio.Event()
    req, handle = await start_run(env, wait=False)
    while "plan_run" not in env.rec.calls:
        await asyncio.sleep(0.05)
    await handle.signal(SuiteRunWorkflow.approve, Approval(approver="eager"))
    env.rec.plan_gate.set()
    while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
        await asyncio.sleep(0.1)
    assert "approval refused" in await refusal_after_signals(handle)  # the eager one: ignored
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.phase, progress.approved_by) == ("awaiting_approval", None)
    assert env.rec.calls == ["plan_run"]
    await reject_main(req.run_id, "test over", "bob", client=env.client)
    assert (await handle.result()).status == "rejected"


@pytest.mark.parametrize("env", [[f"t{i:03d}" for i in range(45)]], indirect=True)
async def test_long_suites_continue_as_new_with_bounded_history(env: Env) -> None:
    outcome = await _approved_run(env, parallel=4, pairs_per_run=10)
    assert outcome.status == "completed"
    # Every pair ran exactly once, across the continue-as-new boundaries.
    keys = [(a.task_id, a.lane, a.attempt) for a in env.rec.attempts]
    assert len(keys) == len(set(keys)) == 45 * 2
    handle = env.client.get_workflow_handle_for(
        SuiteRunWorkflow.run, run_workflow_id(outcome.run_id)
    )
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.done, progress.total, progress.by_class) == (45, 45, {"completed": 90})
    assert env.rec.max_live_pairs <= 4
    # The run went through several workflow runs, each with a small history.
    runs = [
        wf
        async for wf in env.client.list_workflows(
            f'WorkflowId = "{run_workflow_id(outcome.run_id)}"'
        )
    ]
    assert len(runs) >= 4
    for wf in runs:
        history = await env.client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        assert len(history.events) < 400
    runs.sort(key=lambda wf: wf.start_time)
    first, last = ((wf.id, wf.run_id) for wf in (runs[0], runs[-1]))
    await record(env.client, {"suite_run_first": first, "suite_run_last": last})


async def test_the_requested_agent_spec_reaches_every_attempt_whole(env: Env) -> None:
    spec = AgentSpec(name="oracle", model="m-1", options={"plan": "p.json", "effort": "high"})
    outcome = await _approved_run(env, agent=spec)
    assert outcome.status == "completed"
    assert env.rec.agent_runs and all(ref.agent == spec for ref in env.rec.agent_runs)
    assert {(a.agent, a.model) for a in env.rec.attempts} == {("oracle", "m-1")}
