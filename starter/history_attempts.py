"""A run's attempts read back from Temporal history: the ledger ``starter audit`` checks.

Attempt workflow ids are deterministic (``run/<run>/task/<task>/<lane>/<n>``), so each
planned lane is read attempt by attempt until one does not exist (and on past any attempt
number found on disk). Each history gives how the attempt ended and what its
``record_attempt`` returned: the digest of what it wrote. An attempt whose workflow failed
or was cancelled by hand is recorded by its pair instead, so the pair's history is read too.
Each attempt's history also gives what its ``evaluate_attempt`` returned (the digest of the
service's grading), and the run's own history its plan, approval, tasks and final scores
(:mod:`starter.run_history`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from durabench.documents import loads_json
from durabench.models.audit import AttemptDigest, Ledger, LedgerAttempt
from durabench.models.results import AttemptResult
from durabench.models.run import RunPlan
from durabench.service import EvaluateAttemptOutput
from starter.run_history import read_run_history
from workflows import attempt_workflow_id, pair_workflow_id, run_workflow_id

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
    client: Client, run_id: str, plan: RunPlan, on_disk: Iterable[tuple[str, str, int]]
) -> Ledger:
    """Run ``run_id``'s attempts as history records them.

    ``run_id`` is the run asked for: never the id its ``plan.json`` names, which anyone
    who can write the file can change to one the server has no history of. ``plan``'s
    tasks and lanes, and ``on_disk`` (task, lane, attempt), are looked for, so an attempt
    beyond a gap or outside the plan is read where it would be.

    Raises:
        LedgerGone: the server does not know the run (retention removed it, or the run
            was made on another server).
    """
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
    beyond: dict[str, dict[str, int]] = {}
    for task_id, lane, n in on_disk:
        lanes = beyond.setdefault(task_id, {})
        lanes[lane] = max(n, lanes.get(lane, 0))
    for task in plan.tasks:
        for lane in plan.lanes:
            beyond.setdefault(task.task_id, {}).setdefault(lane, 0)
    gate = asyncio.Semaphore(_AT_ONCE)
    async with asyncio.TaskGroup() as tg:
        tasks = [
            tg.create_task(_task(client, gate, run_id, t, lanes)) for t, lanes in beyond.items()
        ]
    status = desc.status or WorkflowExecutionStatus.RUNNING
    first = desc.raw_description.workflow_execution_info.first_run_id or desc.run_id
    run = await read_run_history(client, run_id, first)
    return Ledger(
        run_ended=_status_word(status),
        attempts=tuple(a for task in tasks for a in task.result()),
        plan=run.plan,
        approval=run.approval,
        task_ids=run.task_ids,
        final_scores=run.final_scores,
        files=run.files,
    )


def _status_word(status: WorkflowExecutionStatus) -> str:
    words = {WorkflowExecutionStatus.CANCELED: "cancelled"}
    return words.get(status, status.name.lower().replace("_", " "))


_Recorded = dict[tuple[str, int], AttemptDigest | None]
"""(lane, attempt) to what a completed ``record_attempt`` returned for it in one history
(``None``: nothing, a history from before digests)."""


async def _task(
    client: Client, gate: asyncio.Semaphore, run_id: str, task_id: str, lanes: dict[str, int]
) -> list[LedgerAttempt]:
    """The attempts of one task's lanes; ``lanes`` maps each to its last attempt on disk."""
    async with gate:
        by_pair = await _history(client, pair_workflow_id(run_id, task_id))
    recorded = await _recorded(client, by_pair or [])
    found: list[LedgerAttempt] = []
    for lane, last in lanes.items():
        n = 1
        while True:
            async with gate:
                events = await _history(client, attempt_workflow_id(run_id, task_id, lane, n))
            if events is not None:
                own = await _recorded(client, events, (lane, n))
                entry = _entry(task_id, lane, n, events, own | recorded)
                found.append(await _with_grade(client, events, entry))
            elif n > last:
                break
            n += 1
    return found


def _entry(
    task_id: str, lane: str, n: int, events: list[HistoryEvent], recorded: _Recorded
) -> LedgerAttempt:
    return LedgerAttempt(
        task_id=task_id,
        lane=lane,
        attempt=n,
        ended=_ENDS.get(events[-1].event_type, "running") if events else "running",
        recorded=(lane, n) in recorded,
        digest=recorded.get((lane, n)),
    )


async def _with_grade(
    client: Client, events: list[HistoryEvent], entry: LedgerAttempt
) -> LedgerAttempt:
    """``entry`` with the last grading its history records, if a service graded it."""
    scheduled: set[int] = set()
    graded, grade = False, None
    for e in events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            if e.activity_task_scheduled_event_attributes.activity_type.name == "evaluate_attempt":
                scheduled.add(e.event_id)
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = e.activity_task_completed_event_attributes
            if done.scheduled_event_id in scheduled:
                (value,) = await client.data_converter.decode(done.result.payloads)
                graded, grade = True, EvaluateAttemptOutput.model_validate(value).eval_sha256
    return entry.model_copy(update={"graded": graded, "grade": grade}) if graded else entry


async def _history(client: Client, workflow_id: str) -> list[HistoryEvent] | None:
    """The workflow's history events; ``None`` if there is no such workflow."""
    events: list[HistoryEvent] = []
    try:
        async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
            events.append(event)
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    return events


async def _recorded(
    client: Client, events: list[HistoryEvent], own: tuple[str, int] | None = None
) -> _Recorded:
    """Each ``record_attempt`` in ``events`` that completed: its attempt, and its digest.

    An attempt records itself with a local activity: its marker holds the result but not
    the input, so ``own`` names the attempt whose history ``events`` is. A pair records
    an attempt its workflow did not (no account, the workflow failed or was cancelled)
    with an activity, named by its input.
    """
    scheduled: dict[int, tuple[str, int]] = {}
    out: _Recorded = {}
    for e in events:
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED and own is not None:
            local = await _local_record(client, e)
            if local is not None:
                out[own] = local[0]
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            call = e.activity_task_scheduled_event_attributes
            if call.activity_type.name == "record_attempt":
                (value,) = await client.data_converter.decode(call.input.payloads)
                result = AttemptResult.model_validate(value)
                scheduled[e.event_id] = (result.lane, result.attempt)
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = e.activity_task_completed_event_attributes
            key = scheduled.get(done.scheduled_event_id)
            if key is not None:
                values = await client.data_converter.decode(done.result.payloads)
                value = values[0] if values else None
                out[key] = None if value is None else AttemptDigest.model_validate(value)
    return out


_LOCAL_ACTIVITY_MARKER = "core_local_activity"
"""The marker the SDK records for a completed local activity (its data names the type)."""


async def _local_record(client: Client, event: HistoryEvent) -> tuple[AttemptDigest | None] | None:
    """What a local ``record_attempt`` returned, if ``event`` is one that completed."""
    marker = event.marker_recorded_event_attributes
    if marker.marker_name != _LOCAL_ACTIVITY_MARKER or "result" not in marker.details:
        return None
    data = loads_json(marker.details["data"].payloads[0].data or b"{}")
    if data.get("activity_type") != "record_attempt":
        return None
    values = await client.data_converter.decode(marker.details["result"].payloads)
    value = values[0] if values else None
    return (None if value is None else AttemptDigest.model_validate(value),)
