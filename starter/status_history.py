"""A run's state when no worker answers: what the server's history and the run's files hold.

Queries need a worker, but the server keeps the run's whole history and its search
attributes, and ``$DURABENCH_HOME`` keeps the plan: the phase comes from the run's
status attribute, the plan from ``plan.json`` (else from ``plan_run``'s recorded result),
the approval from ``record_run``'s input, and the pairs from the children the run started
and their closes (child-closed events, and ``await_pairs`` results for pairs carried over
continue-as-new), counted as the workflow counts them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, get_args

from temporalio.api.enums.v1 import EventType, TaskQueueType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowExecutionDescription

from durabench.models.pair import PairDone, pair_end
from durabench.models.results import PairResult
from durabench.models.run import Approval, PlanSummary, RunPlan
from durabench.models.suite_run import ProgressOutput, RunPhase
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from starter.console import approval_hint, console, plan_table, progress_line, shown
from starter.refusal import plain
from starter.route import no_worker_route
from starter.run_history import chain_events, run_record
from workflows.search_attributes import RUN_STATUS

__all__ = ["Known", "has_workers", "print_known", "read_known"]

_SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
_CHILD = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
_SCHEDULED = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
_COMPLETED = EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
_CHILD_COMPLETED = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED
_CHILD_FAILED = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED
_CHILD_CANCELED = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED
_CHILD_CLOSED = {
    _CHILD_COMPLETED: "child_workflow_execution_completed_event_attributes",
    _CHILD_FAILED: "child_workflow_execution_failed_event_attributes",
    _CHILD_CANCELED: "child_workflow_execution_canceled_event_attributes",
    EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED: (
        "child_workflow_execution_terminated_event_attributes"
    ),
    EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT: (
        "child_workflow_execution_timed_out_event_attributes"
    ),
}
"""Each event that records a child's close, and its attributes' field."""
_SHOWN_FINISHED = 20
"""Finished pairs named one by one; beyond that, a count."""

POLLED_WITHIN = timedelta(minutes=2)
"""A poller seen longer ago than this has stopped (workers poll at least every minute)."""

PHASE_WORDS = {
    "planning": "planning",
    "awaiting_approval": "waiting for approval",
    "running": "running its pairs",
    "reporting": "writing its report",
}
"""How a phase of a running run reads in a sentence."""


class Known(NamedTuple):
    """A run as history and files show it, with no worker to ask."""

    progress: ProgressOutput
    finished: tuple[str, ...]
    """Task ids of the pairs that told the run they ended, in that order."""
    plan: PlanSummary | None
    approval: Approval | None


async def has_workers(client: Client, task_queue: str) -> bool:
    """Whether a worker polled the run's queue within :data:`POLLED_WITHIN`.

    The server lists a queue's pollers for minutes after they stop; a live worker polls
    again at least every minute. None that recent: a query would only wait out its
    deadline, so it is not sent.
    """
    answer = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    since = datetime.fromtimestamp(time.time(), tz=UTC) - POLLED_WITHIN
    return any(p.last_access_time.ToDatetime(tzinfo=UTC) >= since for p in answer.pollers)


async def read_known(
    client: Client, settings: Settings, run_id: str, desc: WorkflowExecutionDescription
) -> Known:
    """The run's phase, plan, approval and pairs, from its history and ``plan.json``."""
    first = desc.raw_description.workflow_execution_info.first_run_id or desc.run_id
    events = await chain_events(client, run_id, first)
    record = await run_record(client, events)
    plan = _plan_on_disk(settings, run_id) or record.plan
    status = desc.typed_search_attributes.get(RUN_STATUS) or "running"
    phase: RunPhase = status if status in get_args(RunPhase) else "running"  # type: ignore[assignment]
    pairs = await _pairs(client, run_id, events)
    progress = ProgressOutput(
        run_id=run_id,
        phase=phase,
        total=plan.task_count if plan else 0,
        done=pairs.done,
        running=tuple(sorted(pairs.running)),
        by_class=pairs.by_class,
        excluded=pairs.excluded,
        approved_by=record.approval.approver if record.approval else None,
        approved_at=record.approval.approved_at if record.approval else None,
        paused=pairs.paused,
    )
    return Known(progress, tuple(pairs.finished), plan, record.approval)


def _plan_on_disk(settings: Settings, run_id: str) -> PlanSummary | None:
    """``plan.json`` of the run under this home; ``None`` where it ran on another host."""
    path = RunPaths.for_run(settings.runs_dir, run_id).plan
    if not path.is_file():
        return None
    return RunPlan.model_validate_json(path.read_text()).summary()


@dataclass
class _Pairs:
    """Pairs counted as ``SuiteRunWorkflow`` counts them, from their closes."""

    done: int = 0
    excluded: int = 0
    by_class: dict[str, int] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    finished: list[str] = field(default_factory=list)
    paused: bool = False

    def ended(self, pair: PairDone) -> None:
        if pair.task_id not in self.running:
            return
        self.running.discard(pair.task_id)
        self.finished.append(pair.task_id)
        self.done += int(not pair.cancelled)
        self.excluded += int(pair.excluded)
        for name, count in pair.by_class.items():
            self.by_class[name] = self.by_class.get(name, 0) + count


async def _pairs(client: Client, run_id: str, events: list[HistoryEvent]) -> _Pairs:
    """The pairs the run started (its children) and heard close."""
    prefix = f"run/{run_id}/task/"
    pairs = _Pairs()
    awaits: set[int] = set()  # event ids of ``await_pairs`` scheduled
    for e in events:
        if e.event_type == _CHILD:
            child = e.start_child_workflow_execution_initiated_event_attributes
            if child.workflow_id.startswith(prefix):
                pairs.running.add(child.workflow_id.removeprefix(prefix))
        elif e.event_type == _SIGNALED:
            signal = e.workflow_execution_signaled_event_attributes
            if signal.signal_name in ("pause", "resume"):
                pairs.paused = signal.signal_name == "pause"
        elif e.event_type == _SCHEDULED:
            if e.activity_task_scheduled_event_attributes.activity_type.name == "await_pairs":
                awaits.add(e.event_id)
        elif e.event_type == _COMPLETED:
            done = e.activity_task_completed_event_attributes
            if done.scheduled_event_id in awaits:
                (ends,) = await client.data_converter.decode(done.result.payloads)
                for end in ends:
                    pairs.ended(PairDone.model_validate(end))
        elif e.event_type in _CHILD_CLOSED:
            task_id = _closed_child(e).removeprefix(prefix)
            pairs.ended(await _child_end(client, task_id, e))
    return pairs


def _closed_child(e: HistoryEvent) -> str:
    """The workflow id of the child whose close ``e`` records."""
    attributes = getattr(e, _CHILD_CLOSED[e.event_type])
    return str(attributes.workflow_execution.workflow_id)


async def _child_end(client: Client, task_id: str, e: HistoryEvent) -> PairDone:
    """How a pair the run started ended, read from its close as the run reads it."""
    if e.event_type == _CHILD_COMPLETED:
        payloads = e.child_workflow_execution_completed_event_attributes.result.payloads
        (result,) = await client.data_converter.decode(payloads, [PairResult])
        return pair_end(task_id, result=result)
    if e.event_type == _CHILD_FAILED:
        failure = e.child_workflow_execution_failed_event_attributes.failure
        app = failure.application_failure_info
        details = await client.data_converter.decode(app.details.payloads)
        return pair_end(
            task_id,
            error_type=app.type or None,
            details=details,
            cancelled=failure.HasField("canceled_failure_info"),
            how=failure.message,
        )
    if e.event_type == _CHILD_CANCELED:
        return pair_end(task_id, cancelled=True)
    return pair_end(task_id, how=EventType.Name(e.event_type).removeprefix("EVENT_TYPE_"))


def print_known(known: Known, settings: Settings, run_id: str, *, running: bool) -> None:
    """Print what history and files show; for a running run, how to get live progress."""
    phase = known.progress.phase
    if running:
        console.print(plain(f"state: running, {PHASE_WORDS.get(phase, phase)}"), markup=False)
        console.print(
            "No worker answers, so this is what the server's history and the run's files hold.",
            markup=False,
        )
    if running and known.plan is not None:  # an ended run: how it ended, not its plan
        console.print(plan_table(known.plan))
    if running and phase == "awaiting_approval":
        console.print(approval_hint(settings, run_id), markup=False)
    _print_pairs(known, running=running)
    if running:
        console.print(_worker_hint(run_id, phase), markup=False)


def _print_pairs(known: Known, *, running: bool) -> None:
    if known.approval is not None:
        at = known.approval.approved_at
        when = f" at {at:%Y-%m-%d %H:%M} UTC" if at else ""
        console.print(f"approved by {shown(known.approval.approver)}{when}")
    if known.approval is None and known.progress.phase in ("planning", "awaiting_approval"):
        return
    line = progress_line(known.progress)
    if not running:  # the phase last recorded is not how it ended: the state above says
        line = "before it ended: " + line.partition(": ")[2].partition("; in flight")[0]
    console.print(line)
    if known.finished:
        named = ", ".join(known.finished[:_SHOWN_FINISHED])
        more = len(known.finished) - _SHOWN_FINISHED
        console.print(shown(f"finished: {named}" + (f" and {more} more" if more > 0 else "")))


def _worker_hint(run_id: str, phase: str) -> str:
    return f"No worker carries the run: {no_worker_route(run_id, phase)}"
