"""Account limits across workers and runs: the pool never grants more than an account's slots.

Two workers poll the shared queue, each with a client of its own as a worker process
would have, the real workflows and the real plan, result and account activities; only
the sandbox is faked, by one ``Recorder`` both workers share, so its agent counters see
every attempt of both runs at once. Two runs of the ``pytorch`` suite (8 attempts each)
compete for two ``claude-code`` accounts of 2 and 1 slots.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.models.suite_run import RunOutcome
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from runtime.client import connect_when_ready
from starter.approve import approve_main
from starter.run import main as run_main
from tests.workflows.account_activities import account_run_activities
from tests.workflows.fakes import Recorder
from tests.workflows.harness import until
from workflows import (
    WORKFLOWS,
    AccountPoolWorkflow,
    SuiteRunWorkflow,
    pool_workflow_id,
    run_workflow_id,
)

SLOTS = {"a": 2, "b": 1}
ACCOUNTS_TOML = """
[[account]]
id = "a"
agent = "claude-code"
secret_env = "A_KEY"
slots = 2

[[account]]
id = "b"
agent = "claude-code"
secret_env = "B_KEY"
slots = 1
"""
IDENTITIES = ("worker-1", "worker-2")
FINISH_S = 20.0
"""How long both runs get to finish once agents may end."""

RunHandle = WorkflowHandle[Any, RunOutcome]


@asynccontextmanager
async def _workers(clients: list[Client], settings: Settings, rec: Recorder) -> AsyncIterator[None]:
    """A worker per client on the shared queue, as ``worker.py`` builds it, sandbox faked.

    The SDK refuses two workers on one queue through one client: each gets its own.
    """
    async with AsyncExitStack() as stack:
        for identity, client in zip(IDENTITIES, clients, strict=True):
            worker = Worker(
                client,
                task_queue=settings.task_queue,
                identity=identity,
                workflows=list(WORKFLOWS),
                activities=account_run_activities(client, settings, rec),
            )
            await stack.enter_async_context(worker)
        yield


async def _start_approved(client: Client, settings: Settings) -> RunHandle:
    """Start a run as ``starter run --detach`` does and approve its plan.

    Each run has 4 pairs in flight: 16 arms for 3 slots, so 13 wait at once, more than
    the 10 updates the server lets a workflow have in flight: waiting must not hold one.
    """
    req = RunRequest(
        run_id=f"r-{uuid.uuid4().hex[:6]}",
        suite="pytorch",
        agent=AgentSpec(name="claude-code", model="claude-haiku-4-5"),
        parallel=4,
        infra_backoff_sec=0.1,
        lease_poll_sec=0.2,  # waiting arms ask the pool again soon
    )
    await run_main(req, detach=True, client=client, settings=settings)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(req.run_id))
    await until(lambda: _planned(handle), f"run {req.run_id} made its plan")
    await approve_main(req.run_id, "ann", client=client)
    return handle


async def _planned(handle: RunHandle) -> bool:
    if (await handle.describe()).close_time is not None:
        await handle.result()  # raises: planning failed
    return await handle.query(SuiteRunWorkflow.plan) is not None


async def _pairs_running(handles: list[RunHandle], count: int) -> bool:
    progress = [await h.query(SuiteRunWorkflow.progress) for h in handles]
    return sum(len(p.running) for p in progress) == count


async def _activity_identities(client: Client, run_ids: list[str]) -> set[str]:
    """Identities of the workers that started activities of these runs' workflows."""
    started = EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    found = set()
    for run_id in run_ids:
        query = f'WorkflowId STARTS_WITH "{run_workflow_id(run_id)}"'
        async for wf in client.list_workflows(query):
            handle = client.get_workflow_handle(wf.id, run_id=wf.run_id)
            async for event in handle.fetch_history_events():
                if event.event_type == started:
                    found.add(event.activity_task_started_event_attributes.identity)
    return found


async def _terminate(handle: WorkflowHandle[Any, Any]) -> None:
    """End the pool: it runs until terminated, and this test's queue has no worker left."""
    try:
        await handle.terminate(reason="test over")
    except Exception:  # noqa: BLE001 - never started: the test failed before planning
        pass


async def test_two_workers_two_runs_never_exceed_an_accounts_slots(
    client: Client,
    temporal_address: str,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.accounts_file.parent.mkdir(parents=True, exist_ok=True)
    settings.accounts_file.write_text(ACCOUNTS_TOML)
    monkeypatch.setenv("A_KEY", "a-secret-0123456789")
    monkeypatch.setenv("B_KEY", "b-secret-0123456789")
    rec = Recorder(queue=settings.task_queue, task_ids=[])
    rec.agent_gate = asyncio.Event()  # agents keep their slot until the pool is saturated
    pool = client.get_workflow_handle_for(
        AccountPoolWorkflow.run, pool_workflow_id(settings.task_queue)
    )
    other = await connect_when_ready(temporal_address, client.namespace)
    try:
        async with _workers([client, other], settings, rec):
            handles = [await _start_approved(client, settings) for _ in range(2)]
            # 8 pairs, two arms each, want an agent: the pool grants 3 slots.
            await until(lambda: sum(rec.on_account.values()) == 3, "all 3 slots in use")
            await until(lambda: _pairs_running(handles, 8), "every pair started")
            saturated = (rec.in_agent, dict(rec.on_account))
            held = await pool.query(AccountPoolWorkflow.snapshot)
            rec.agent_gate.set()
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(h.result() for h in handles)), timeout=FINISH_S
            )
            final = await pool.query(AccountPoolWorkflow.snapshot)
            plans = [await h.query(SuiteRunWorkflow.plan) for h in handles]
        run_ids = [o.run_id for o in outcomes]
        identities = await _activity_identities(client, run_ids)
    finally:
        await _terminate(pool)

    assert saturated == (3, SLOTS)  # observed: every slot busy at once, none beyond
    assert sorted(x.account_id for x in held.leases) == ["a", "a", "b"]
    assert all(rec.max_on_account[account] <= slots for account, slots in SLOTS.items())
    assert set(rec.max_on_account) == set(SLOTS)  # no agent ran without an account
    assert [o.status for o in outcomes] == ["completed", "completed"]
    assert [p.account_slots if p else None for p in plans] == [3, 3]
    for run_id in run_ids:
        paths = RunPaths.for_run(settings.runs_dir, run_id)
        result = RunResult.model_validate_json(paths.results.read_text())
        assert len(result.attempts) == 8
        assert all(a.account in SLOTS for a in result.attempts)
        assert all(a.exit_class == "completed" for a in result.attempts)
    assert final.leases == ()  # every lease given back
    assert set(IDENTITIES) <= identities  # both workers ran activities of the runs
