"""SuiteRunWorkflow on a real Temporal dev server, with recorded fake activities."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.worker import Worker

from durabench.models import RunOutcome, RunRequest
from starter.approve import approve_main, reject_main
from tests.workflows.fakes import BUILD_FAILS, SLOW, VERIFY_FAILS, Recorder
from workflows import WORKFLOWS, SuiteRunWorkflow, run_workflow_id
from workflows.search_attributes import for_request


@dataclass
class Env:
    client: Client
    rec: Recorder


@pytest.fixture
async def env(client: Client, request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    task_ids = getattr(request, "param", ["t1", "t2", "t3", "t4"])
    rec = Recorder(queue=queue, task_ids=task_ids)
    async with Worker(
        client, task_queue=queue, workflows=list(WORKFLOWS), activities=rec.activities()
    ):
        yield Env(client, rec)


async def _start(env: Env, parallel: int = 2):  # type: ignore[no-untyped-def]
    request = RunRequest(run_id=f"r-{uuid.uuid4().hex[:8]}", suite="s", parallel=parallel)
    handle = await env.client.start_workflow(
        SuiteRunWorkflow.run,
        request,
        id=run_workflow_id(request.run_id),
        task_queue=env.rec.queue,
        search_attributes=for_request(request),
    )
    while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
        await asyncio.sleep(0.1)
    return request, handle


async def test_run_waits_for_approval_then_runs_every_pair(env: Env) -> None:
    request, handle = await _start(env, parallel=2)
    # Give the workflow every chance to run ahead; it must still be parked at the gate.
    await asyncio.sleep(1.0)
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
    assert all(a.status == "completed" and a.reward == 1.0 for a in env.rec.attempts)
    final = await handle.query(SuiteRunWorkflow.progress)
    assert (final.phase, final.done, final.approved_by) == ("completed", 4, "ann")
    assert final.by_status == {"completed": 8}


async def test_reject_ends_the_run_before_anything_starts(env: Env) -> None:
    request, handle = await _start(env)
    await reject_main(request.run_id, "wrong model", "bob", client=env.client)
    outcome = await handle.result()
    assert (outcome.status, outcome.reason) == ("rejected", "wrong model")
    assert env.rec.calls == ["plan_run"]


@pytest.mark.parametrize("env", [[BUILD_FAILS, VERIFY_FAILS, "t-ok"]], indirect=True)
async def test_failed_phases_end_attempts_not_the_run(env: Env) -> None:
    request, handle = await _start(env, parallel=3)
    await approve_main(request.run_id, "ann", client=env.client)
    outcome = await handle.result()

    assert outcome.status == "completed"
    by_task = {(a.task_id, a.lane): a for a in env.rec.attempts}
    build = by_task[(BUILD_FAILS, "baseline")]
    assert build.status == "infra_error" and "ImageBuildError" in build.reason
    assert "build.log" in build.reason
    verify = by_task[(VERIFY_FAILS, "baseline")]
    assert verify.status == "verifier_error" and verify.reward is None
    assert by_task[("t-ok", "baseline")].status == "completed"
    # A failed build never provisioned; everything provisioned was torn down.
    assert all(t != BUILD_FAILS for t, _ in env.rec.provisioned)
    assert sorted(env.rec.provisioned) == sorted(env.rec.torn_down)
    # Non-retryable: the failed build was tried once per lane, not three times.
    assert env.rec.calls.count("prepare_image") == 6


@pytest.mark.parametrize("env", [[SLOW]], indirect=True)
async def test_cancelling_a_run_tears_down_every_sandbox(env: Env) -> None:
    request, handle = await _start(env)
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
