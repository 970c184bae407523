"""A run's attempts read back from Temporal history: the ledger ``starter audit`` checks.

Attempt workflow ids are deterministic (``run/<run>/task/<task>/<lane>/<n>``), so each
planned lane is read attempt by attempt until one does not exist (and on past any attempt
number found on disk). Each history gives how the attempt ended and what its
``record_attempt`` returned: the digest of what it wrote.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from durabench.models import AttemptDigest, Ledger, LedgerAttempt, RunPlan
from workflows import attempt_workflow_id, run_workflow_id

__all__ = ["LedgerGone", "read_ledger"]

_AT_ONCE = 8
"""Histories read at the same time."""

_ENDS = {
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: "completed",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: "failed",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED: "cancelled",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: "terminated",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT: "timed out",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: "continued as new",
}


class LedgerGone(Exception):
    """The server has no history of the run: why, in words the audit prints."""


async def read_ledger(
    client: Client, plan: RunPlan, on_disk: Iterable[tuple[str, str, int]]
) -> Ledger:
    """The run's attempts as history records them.

    ``on_disk`` (task, lane, attempt) are read too, so an attempt beyond a gap or outside
    the plan is looked for where it would be.

    Raises:
        LedgerGone: the server does not know the run (retention removed it, or the run
            was made on another server).
    """
    run_id = plan.request.run_id
    try:
        desc = await client.get_workflow_handle(run_workflow_id(run_id)).describe()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        raise LedgerGone(
            f"the Temporal server at {client.service_client.config.target_host} has no "
            f"history of {run_workflow_id(run_id)} (its retention removed it, or the run "
            "was made on another server)"
        ) from None
    beyond: dict[tuple[str, str], int] = {}
    for task_id, lane, n in on_disk:
        beyond[(task_id, lane)] = max(n, beyond.get((task_id, lane), 0))
    for task in plan.tasks:
        for lane in plan.lanes:
            beyond.setdefault((task.task_id, lane), 0)
    gate = asyncio.Semaphore(_AT_ONCE)
    async with asyncio.TaskGroup() as tg:
        arms = [tg.create_task(_arm(client, gate, run_id, *k, last)) for k, last in beyond.items()]
    status = desc.status or WorkflowExecutionStatus.RUNNING
    return Ledger(
        run_ended=_status_word(status),
        attempts=tuple(a for arm in arms for a in arm.result()),
    )


def _status_word(status: WorkflowExecutionStatus) -> str:
    words = {WorkflowExecutionStatus.CANCELED: "cancelled"}
    return words.get(status, status.name.lower().replace("_", " "))


async def _arm(
    client: Client, gate: asyncio.Semaphore, run_id: str, task_id: str, lane: str, last: int
) -> list[LedgerAttempt]:
    """Attempts 1, 2, ... of one lane, until one is missing past ``last``."""
    found: list[LedgerAttempt] = []
    n = 1
    while True:
        async with gate:
            entry = await _attempt(client, run_id, task_id, lane, n)
        if entry is not None:
            found.append(entry)
        elif n > last:
            return found
        n += 1


async def _attempt(
    client: Client, run_id: str, task_id: str, lane: str, n: int
) -> LedgerAttempt | None:
    handle = client.get_workflow_handle(attempt_workflow_id(run_id, task_id, lane, n))
    events: list[HistoryEvent] = []
    try:
        async for event in handle.fetch_history_events():
            events.append(event)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    ended = _ENDS.get(events[-1].event_type, "running") if events else "running"
    digest = await _digest(client, events)
    return LedgerAttempt(task_id=task_id, lane=lane, attempt=n, ended=ended, digest=digest)


async def _digest(client: Client, events: list[HistoryEvent]) -> AttemptDigest | None:
    """What ``record_attempt`` returned; ``None`` if it never completed, or returned nothing."""
    scheduled = {
        e.event_id
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == "record_attempt"
    }
    for e in events:
        done = e.activity_task_completed_event_attributes
        if (
            e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
            and done.scheduled_event_id in scheduled
            and done.result.payloads
        ):
            (value,) = await client.data_converter.decode(done.result.payloads)
            return None if value is None else AttemptDigest.model_validate(value)
    return None
