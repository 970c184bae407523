"""What a run's own workflow history records: its plan, approval, tasks and final scores.

The run workflow continues as new every so many tasks, so its history is a chain of runs
read from the first (``first_run_id``) along each ``continued as new`` to the last. In it:
what ``plan_run`` returned (the plan without its tasks), what ``record_run`` returned (the
approval, with the sender of an approving signal named), every page of tasks ``plan_page``
handed out, what ``score_run`` returned for each lane, and the manifest of the run's own
files ``write_report`` returned. ``starter audit`` holds the run's files against these.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from durabench.models.audit import Manifest
from durabench.models.run import Approval, PlanSummary
from durabench.models.suite_run import PlanPage, PlanPageInput, RecordRunInput, ReportOutput
from workflows import run_workflow_id

__all__ = ["RunHistory", "chain_events", "read_run_history", "run_record"]

_CONTINUED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
_READ = frozenset({"plan_run", "record_run", "plan_page", "score_run", "write_report"})


class RunHistory(NamedTuple):
    """The run workflow's record; a field is ``None`` when history holds none of it."""

    plan: PlanSummary | None
    approval: Approval | None
    task_ids: tuple[str, ...] | None
    final_scores: dict[str, float] | None
    files: Manifest | None = None


async def read_run_history(client: Client, run_id: str, first_run_id: str) -> RunHistory:
    """The record of ``run_id``'s workflow, every run of its chain from ``first_run_id``."""
    return await run_record(client, await chain_events(client, run_id, first_run_id))


async def chain_events(client: Client, run_id: str, first_run_id: str) -> list[HistoryEvent]:
    """Every event of ``run_id``'s workflow, run after run from ``first_run_id``."""
    workflow_id = run_workflow_id(run_id)
    out: list[HistoryEvent] = []
    current: str | None = first_run_id
    while current:
        handle = client.get_workflow_handle(workflow_id, run_id=current)
        events = [e async for e in handle.fetch_history_events()]
        out += events
        last = events[-1] if events else None
        current = None
        if last is not None and last.event_type == _CONTINUED:
            current = last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
    return out


async def run_record(client: Client, events: list[HistoryEvent]) -> RunHistory:
    """What ``events`` (a chain's, from :func:`chain_events`) record of the run."""
    return _record(await _completed(client, events))


async def _completed(client: Client, events: list[HistoryEvent]) -> list[tuple[str, Any, Any]]:
    """Each completed call of the activities read here: (name, input, result)."""
    scheduled: dict[int, tuple[str, Any]] = {}
    out = []
    for e in events:
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            call = e.activity_task_scheduled_event_attributes
            if call.activity_type.name in _READ:
                values = await client.data_converter.decode(call.input.payloads)
                scheduled[e.event_id] = (call.activity_type.name, values[0] if values else None)
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            done = e.activity_task_completed_event_attributes
            if done.scheduled_event_id in scheduled:
                name, given = scheduled[done.scheduled_event_id]
                values = await client.data_converter.decode(done.result.payloads)
                out.append((name, given, values[0] if values else None))
    return out


def _record(calls: list[tuple[str, Any, Any]]) -> RunHistory:
    plan = approval = files = None
    pages: dict[int, tuple[str, ...]] = {}
    scores: dict[str, float] = {}
    for name, given, result in calls:
        if name == "plan_run" and result is not None:
            plan = PlanSummary.model_validate(result)
        elif name == "record_run":  # its result: the approval with a signal's sender named
            asked = RecordRunInput.model_validate(given).approval
            approval = Approval.model_validate(result) if result is not None else asked
        elif name == "plan_page":
            offset = PlanPageInput.model_validate(given).offset
            pages[offset] = tuple(t.task_id for t in PlanPage.model_validate(result).tasks)
        elif name == "score_run":
            lane, score = _score(given, result)
            scores[lane] = score
        elif name == "write_report":  # the last one: what the run's files were at its end
            files = ReportOutput.model_validate(result).manifest
    task_ids = tuple(t for offset in sorted(pages) for t in pages[offset]) if pages else None
    return RunHistory(plan, approval, task_ids, scores, files)


def _score(given: Any, result: Any) -> tuple[str, float]:
    """A lane's final score from a ``score_run`` call.

    The service package loads its HTTP client; only a run a service graded has this call,
    so ``status`` of any other run never loads it.
    """
    from durabench.service import ScoreRunInput, ScoreRunOutput

    lane = ScoreRunInput.model_validate(given).lane
    return lane, ScoreRunOutput.model_validate(result).final_score
