"""An arm that waits for a busy account keeps its pair's history small, however long.

Every slot in use, an arm used to ask the pool on a durable timer: about 11 events an
ask, ~330 an hour for a pair. It now asks from one heartbeating activity that returns
when a slot is free (or after an hour): the pool's history counts the asks, the pair's
does not.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from durabench.models.accounts import LeaseRequest, PoolAccount, PoolState, ReleaseRequest
from tests.workflows.fakes import Recorder
from tests.workflows.harness import until
from tests.workflows.test_account_pool import _pair_on_accounts, _start_pool, _worker
from workflows import AccountPoolWorkflow, PairedTaskWorkflow, pair_workflow_id

ASKS = 8
"""Asks of the waiting arm before the slot frees up."""


async def test_asks_for_a_busy_slot_do_not_grow_the_pairs_history(
    client: Client, tmp_path: Path
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=["t1"])
    async with _worker(client, queue, rec, tmp_path):
        pool, held, pair = await _pair_waiting_for_a_slot(client, queue)
        await until(lambda: _asked(pool, ASKS + 1), f"the arm asked {ASKS} times", tries=600)
        pair_events = len([e async for e in pair.fetch_history_events()])
        await pool.execute_update(AccountPoolWorkflow.release, ReleaseRequest(lease_id=held))
        result = await pair.result()
        await pool.terminate("test over")
        record = os.environ.get("DURABENCH_RECORD_HISTORIES")  # how tests/histories got it
        if record:
            text = (await pair.fetch_history()).to_json()
            Path(record, "paired_task_await_lease.json").write_text(text)
    assert [a.exit_class for a in result.attempts] == ["completed"]
    assert pair_events < 40  # before: some 11 events for every ask


async def _pair_waiting_for_a_slot(
    client: Client, queue: str
) -> tuple[WorkflowHandle[Any, Any], str, WorkflowHandle[Any, Any]]:
    """The pool with its one slot held (and the lease id), and a pair that wants it."""
    state = PoolState(accounts=(PoolAccount(id="a", agent="claude-code", slots=1),))
    pool = await _start_pool(client, queue, state)
    other = LeaseRequest(
        agent="claude-code", holder_workflow_id=pool.id, holder_run_id="x", label="other"
    )
    held = await pool.execute_update(AccountPoolWorkflow.lease, other)
    if held.lease is None:
        raise AssertionError(f"the free slot was not leased: {held.why}")
    run_id = f"r-{uuid.uuid4().hex[:8]}"
    pair_input = _pair_on_accounts(run_id, infra_retries=0).model_copy(
        update={"lease_poll_sec": 0.05}
    )
    pair = await client.start_workflow(
        PairedTaskWorkflow.run, pair_input, id=pair_workflow_id(run_id, "t1"), task_queue=queue
    )
    return pool, held.lease.lease_id, pair


async def _asked(pool: WorkflowHandle[Any, Any], times: int) -> bool:
    """Whether the pool took ``times`` lease updates (the test's own lease is one)."""
    accepted = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    leases = 0
    async for e in pool.fetch_history_events():
        attrs = e.workflow_execution_update_accepted_event_attributes
        leases += e.event_type == accepted and attrs.accepted_request.input.name == "lease"
    return leases >= times


async def test_a_pause_stops_the_asking_and_resume_gets_the_slot(
    client: Client, tmp_path: Path
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=["t1"])
    async with _worker(client, queue, rec, tmp_path):
        pool, held, pair = await _pair_waiting_for_a_slot(client, queue)
        await until(lambda: _asked(pool, 3), "the arm asks from its activity")
        await pair.signal(PairedTaskWorkflow.pause, 1)

        async def paused() -> bool:
            arms = (await pair.query(PairedTaskWorkflow.progress)).arms
            return bool(arms) and arms[0].state == "paused"

        await until(paused, "the arm stopped asking: paused")
        await pool.execute_update(AccountPoolWorkflow.release, ReleaseRequest(lease_id=held))
        assert "run_agent" not in rec.calls
        await pair.signal(PairedTaskWorkflow.resume, 2)
        result = await pair.result()
        await pool.terminate("test over")
    assert [(a.exit_class, a.account) for a in result.attempts] == [("completed", "a")]
