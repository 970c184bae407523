"""A worker that lets go of workflows mid-flight leaves their cleanup to a later worker.

A stopped worker does not evict the workflows it holds: their suspended coroutines stay
until Python collects them, and collecting one throws ``GeneratorExit`` into it. A
``finally`` that schedules cleanup then issues its commands through whatever workflow's
event loop is running at that moment. The probe workflow below collects them inside its
own activation, as the next workflow of a long-lived process would by chance. A worker
that caches one workflow evicts another at nearly every activation: an eviction is not
the workflow's end either.
"""

from __future__ import annotations

import asyncio
import gc
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from types import CoroutineType
from typing import Any

import pytest
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from runtime.workflow_runner import workflow_runner
from starter.approve import approve_main
from starter.run import main as run_main
from tests.workflows.account_activities import account_run_activities
from tests.workflows.fakes import Recorder
from tests.workflows.harness import Env, scheduled, start_run, until
from workflows import (
    WORKFLOWS,
    AccountPoolWorkflow,
    SuiteRunWorkflow,
    attempt_workflow_id,
    pair_workflow_id,
    pool_workflow_id,
    run_workflow_id,
)

_HELD: list[Any] = []
"""Coroutines left behind by the stopped worker, kept alive until the probe lets go."""

LANES = ("baseline", "sourcegraph_full")


@activity.defn(name="probe_step")
async def probe_step() -> None:
    """The probe's own (and only) activity."""


@workflow.defn(sandboxed=False)
class ProbeWorkflow:
    """Collects what a stopped worker left, in its activation; then runs its own step."""

    @workflow.run
    async def run(self) -> None:
        _HELD.clear()
        gc.collect()
        await workflow.execute_activity(probe_step, start_to_close_timeout=timedelta(seconds=30))


def _pending_coroutines() -> list[Any]:
    return [o for o in gc.get_objects() if isinstance(o, CoroutineType) and o.cr_frame is not None]


def _worker(client: Client, rec: Recorder) -> Worker:
    return Worker(
        client,
        task_queue=rec.queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=rec.activities(),
        max_heartbeat_throttle_interval=timedelta(seconds=1),
    )


@asynccontextmanager
async def _left_behind() -> AsyncIterator[None]:
    """Nothing is collected in the block; what it left suspended is then held for the probe."""
    gc.disable()
    try:
        yield
        _HELD.extend(_pending_coroutines())
    finally:
        gc.enable()


async def _probe(client: Client) -> list[str]:
    """Run the probe (it collects what is held); the activities its history scheduled."""
    queue = f"probe-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[ProbeWorkflow],
        activities=[probe_step],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        probe = await client.start_workflow(
            ProbeWorkflow.run, id=f"probe-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
        await probe.result()
    return scheduled([e async for e in probe.fetch_history_events()])


async def test_attempts_a_stopped_worker_left_clean_up_once_and_only_in_their_own_history(
    client: Client,
) -> None:
    rec = Recorder(queue=f"wf-{uuid.uuid4().hex[:8]}", task_ids=["t1"])
    rec.agent_gate = asyncio.Event()
    async with _left_behind(), _worker(client, rec):
        req, handle = await start_run(Env(client, rec), parallel=1)
        await approve_main(req.run_id, "ann", client=client)
        await until(lambda: rec.in_agent == 2, "both attempts in their agent")

    assert await _probe(client) == ["probe_step"]

    rec.agent_gate.set()
    async with _worker(client, rec):
        assert (await handle.result()).status == "completed"
    assert sorted(rec.torn_down) == [("t1", lane) for lane in LANES]
    for lane in LANES:
        attempt = client.get_workflow_handle(attempt_workflow_id(req.run_id, "t1", lane, 1))
        events = [e async for e in attempt.fetch_history_events()]
        assert scheduled(events).count("finish_sandbox") == 1


async def test_a_worker_caching_one_workflow_runs_a_suite_to_the_end_cleaning_up_once(
    client: Client,
) -> None:
    """Every activation evicts another workflow: none takes its eviction for its own end.

    An evicted run waiting for its pairs is cancelled by the SDK like a cancelled run; it
    must not set about cancelling them (the SDK refuses what it starts, and a coroutine
    it made is left unawaited).
    """
    rec = Recorder(queue=f"wf-{uuid.uuid4().hex[:8]}", task_ids=["t1", "t2"])
    rec.agent_gate = asyncio.Event()
    async with Worker(
        client,
        task_queue=rec.queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=rec.activities(),
        max_cached_workflows=1,
    ):
        req, handle = await start_run(Env(client, rec), parallel=2)
        await approve_main(req.run_id, "ann", client=client)
        await until(lambda: rec.in_agent == 4, "four attempts in their agent")
        rec.agent_gate.set()
        assert (await handle.result()).status == "completed"
    assert sorted(rec.torn_down) == [(t, lane) for t in ("t1", "t2") for lane in LANES]
    for task in ("t1", "t2"):
        for lane in LANES:
            attempt = client.get_workflow_handle(attempt_workflow_id(req.run_id, task, lane, 1))
            assert scheduled([e async for e in attempt.fetch_history_events()]) == [
                "claim_host",
                "provision_sandbox",
                "run_agent",
                "verify",
                "finish_sandbox",
            ]


ACCOUNTS_TOML = """
[[account]]
id = "a"
agent = "claude-code"
secret_env = "A_KEY"
slots = 2
"""


def _account_worker(client: Client, settings: Settings, rec: Recorder) -> Worker:
    """Real plan, result and account activities (``worker.py``'s); the sandbox faked."""
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=account_run_activities(client, settings, rec),
        max_heartbeat_throttle_interval=timedelta(seconds=1),
    )


async def test_a_pair_a_stopped_worker_left_gives_its_slots_back_once_in_its_own_history(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.accounts_file.parent.mkdir(parents=True, exist_ok=True)
    settings.accounts_file.write_text(ACCOUNTS_TOML)
    monkeypatch.setenv("A_KEY", "a-secret-0123456789")
    rec = Recorder(queue=settings.task_queue, task_ids=[])
    rec.agent_gate = asyncio.Event()
    pool = client.get_workflow_handle_for(
        AccountPoolWorkflow.run, pool_workflow_id(settings.task_queue)
    )
    req = RunRequest(
        run_id=f"r-{uuid.uuid4().hex[:6]}",
        suite="pytorch",
        agent=AgentSpec(name="claude-code", model="claude-haiku-4-5"),
        parallel=1,
        infra_backoff_sec=0.1,
    )
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(req.run_id))
    try:
        async with _left_behind(), _account_worker(client, settings, rec):
            await run_main(req, detach=True, client=client, settings=settings)
            await until(lambda: _planned(handle), "the run made its plan")
            await approve_main(req.run_id, "ann", client=client)
            await until(lambda: rec.in_agent == 2, "both arms on the account, in their agent")

        assert await _probe(client) == ["probe_step"]

        rec.agent_gate.set()
        async with _account_worker(client, settings, rec):
            assert (await handle.result()).status == "completed"
            final = await pool.query(AccountPoolWorkflow.snapshot)
    finally:
        await pool.terminate(reason="test over")
    assert final.leases == ()
    pair = client.get_workflow_handle(pair_workflow_id(req.run_id, rec.agent_runs[0].task.task_id))
    assert scheduled([e async for e in pair.fetch_history_events()]).count("release_account") == 2


async def _planned(handle: WorkflowHandle[Any, Any]) -> bool:
    return await handle.query(SuiteRunWorkflow.plan) is not None
