"""The account pool keeps serving past the server's limit of updates per workflow run.

The server refuses more than 2,000 updates in one workflow run. Every attempt on an
account costs the pool two (lease, release), so a pool that continued as new only by
history length stopped serving after about 1,000 attempts, and every arm waited forever.
A server with default settings suggests continue-as-new at 4,096 events or 1,800
updates, which hides this; a cluster configured to suggest it later (or an older server
that never suggests it for updates) does not. So this test runs on a dev server of its
own that suggests it only at 100,000 events or at the update limit itself.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from activities import AccountActivities
from durabench.models.accounts import LeaseRequest, PoolAccount, PoolState, ReleaseRequest
from durabench.settings.values import Settings
from runtime.client import connect_when_ready
from runtime.embedded import dev_server_args, wait_for_port
from tests.conftest import free_port
from tests.workflows.harness import until
from workflows import WORKFLOWS, AccountPoolWorkflow, pool_workflow_id

PAIRS = 1_300
"""Lease/release pairs: 2,600 updates, well past the server's 2,000 per run."""

CALLERS = 10
"""Concurrent callers, as many arms ask at once (the server allows 10 updates in flight)."""


@pytest.fixture(scope="module")
async def late_client(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """A client of a dev server that suggests continue-as-new too late to rely on."""
    port = free_port()
    log = tmp_path_factory.mktemp("late") / "server.log"
    args = dev_server_args(port=port, ui_port=None, db_file=None)
    for value in (
        "limit.historyCount.suggestContinueAsNew=100000",
        "history.maxTotalUpdates.suggestContinueAsNewThreshold=1.0",
    ):
        args += ["--dynamic-config-value", value]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    try:
        await wait_for_port("127.0.0.1", port, timeout_s=60, log=log)
        yield await connect_when_ready(f"127.0.0.1:{port}", "default")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_1300_leases_and_releases_are_all_served(late_client: Client, tmp_path: Path) -> None:
    client = late_client
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    accounts = AccountActivities(client, Settings(home=tmp_path, task_queue=queue))
    state = PoolState(accounts=(PoolAccount(id="a", agent="claude-code", slots=CALLERS),))
    async with Worker(
        client, task_queue=queue, workflows=list(WORKFLOWS), activities=[accounts.vanished_holders]
    ):
        pool = await client.start_workflow(
            AccountPoolWorkflow.run, state, id=pool_workflow_id(queue), task_queue=queue
        )
        first_run = (await pool.describe()).run_id
        served: list[str] = []

        async def caller(n: int) -> None:
            for i in range(PAIRS // CALLERS + (n < PAIRS % CALLERS)):
                req = LeaseRequest(
                    agent="claude-code",
                    holder_workflow_id=f"holder-{n}",
                    holder_run_id="r",
                    label=f"{n}/{i}",
                    lease_id=str(uuid.uuid4()),
                )
                grant = await pool.execute_update(AccountPoolWorkflow.lease, req)
                assert grant.lease is not None, grant.why
                release = ReleaseRequest(lease_id=grant.lease.lease_id)
                await pool.execute_update(AccountPoolWorkflow.release, release)
                served.append(grant.lease.lease_id)

        await asyncio.gather(*(caller(n) for n in range(CALLERS)))
        latest = client.get_workflow_handle_for(AccountPoolWorkflow.run, pool.id)
        snapshot = await latest.query(AccountPoolWorkflow.snapshot)
        runs = [wf async for wf in client.list_workflows(f'WorkflowId = "{pool.id}"')]
        await latest.terminate("test over")
    assert len(served) == len(set(served)) == PAIRS
    assert snapshot.leases == ()  # every lease given back, across continue-as-new
    assert (await latest.describe()).run_id != first_run and len(runs) >= 2


async def test_the_pool_continues_as_new_after_max_updates(client: Client, tmp_path: Path) -> None:
    """Counted by the pool itself, whatever the server suggests (recorded for replay)."""
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    accounts = AccountActivities(client, Settings(home=tmp_path, task_queue=queue))
    state = PoolState(accounts=(PoolAccount(id="a", agent="claude-code", slots=1),), max_updates=10)
    async with Worker(
        client, task_queue=queue, workflows=list(WORKFLOWS), activities=[accounts.vanished_holders]
    ):
        pool = await client.start_workflow(
            AccountPoolWorkflow.run, state, id=pool_workflow_id(queue), task_queue=queue
        )
        first = client.get_workflow_handle(pool.id, run_id=(await pool.describe()).run_id)
        req = LeaseRequest(agent="claude-code", holder_workflow_id="h", holder_run_id="r", label="")
        for _ in range(6):
            grant = await pool.execute_update(AccountPoolWorkflow.lease, req)
            assert grant.lease is not None
            release = ReleaseRequest(lease_id=grant.lease.lease_id)
            await pool.execute_update(AccountPoolWorkflow.release, release)
        await until(lambda: _closed(first), "the pool's first run continued as new")
        history = await first.fetch_history()
        record = os.environ.get("DURABENCH_RECORD_HISTORIES")  # how tests/histories got it
        if record:
            Path(record, "account_pool_update_count.json").write_text(history.to_json())
        await client.get_workflow_handle(pool.id).terminate("test over")
    accepted = [e for e in history.events if e.HasField(_ACCEPTED)]
    assert 10 <= len(accepted) < 12  # it stopped taking updates once it had ten
    assert history.events[-1].HasField("workflow_execution_continued_as_new_event_attributes")


_ACCEPTED = "workflow_execution_update_accepted_event_attributes"


async def _closed(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await handle.describe()).close_time is not None
