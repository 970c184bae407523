"""What the Temporal Web UI shows of a run: its details, in Temporal's Markdown.

Static details are set when the run starts (what was asked; the plan is not made yet).
Current details follow the run: the plan and how to approve it while it waits, then
progress and pauses, then how it ended. They are metadata, not commands: setting them
changes no history, so old histories replay as they were.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from durabench.models.pair import ArmProgress
    from durabench.models.results import LaneSummary
    from durabench.models.run import PlanSummary, RunRequest
    from durabench.models.suite_run import ProgressOutput
    from durabench.planning.rows import PlanRow, plan_rows, request_rows
    from durabench.spend.projection import spend_line

from workflows.search_attributes import suite_of

_ASKED = (
    *("model", "suite", "selection", "agent", "config mode", "tasks", "parallel slots"),
    *("token budget", "agent-hours (upper bound)", "expected cost", "spend cap", "rerun of"),
)
"""The plan rows the approval timer's summary repeats (and every alert)."""


def approve_hint(run_id: str) -> str:
    """How a person approves run ``run_id``: the starter, the ``temporal`` CLI, the Web UI."""
    return (
        f"`python -m starter approve {run_id}`, or in this UI: Send a Signal, approve, input "
        f'{{"approver": "your name"}}, or `temporal workflow signal --workflow-id run/{run_id} '
        "--name approve --input '{}'` (add --address HOST:PORT off the default server)"
    )


def approval_summary(plan: PlanSummary, timeout: timedelta) -> str:
    """Summary of the approval timer: the plan, how to approve or reject, when it expires.

    The history keeps it, so the Web UI shows it where the run opens with no worker
    running (current details come from a query, which needs one).
    """
    rows = [r for r in plan_rows(plan) if r.key in _ASKED or r.alert]
    said = " · ".join(f"{'⚠ ' if r.alert else ''}{r.key}: {r.value}" for r in rows)
    return (
        f"waiting for approval: {approve_hint(plan.request.run_id)}; signal `reject` "
        f"refuses it; unapproved, it expires after {timeout}. Plan: {said}"
    )


def outcome_headline(measured: bool, lanes: Iterable[LaneSummary], excluded: int) -> str:
    """A finished run in a line: its scores per lane, or that it measured nothing."""
    if not measured:
        return (
            f"Nothing was measured: all {excluded} pair(s) were excluded for infrastructure "
            "reasons; report.md says why and how to rerun them."
        )
    parts = []
    for lane in lanes:
        mean = "no score" if lane.mean_reward is None else f"mean reward {lane.mean_reward:.3g}"
        parts.append(f"{lane.lane}: {mean} ({lane.passed}/{lane.scored} passed)")
    dropped = f"; {excluded} pair(s) excluded" if excluded else ""
    return "; ".join(parts) + dropped


__all__ = [
    "approval_summary",
    "approve_hint",
    "current_details",
    "ended_by",
    "outcome_headline",
    "markdown_table",
    "pair_details",
    "page_summary",
    "plan_summary",
    "request_details",
]


def markdown_table(rows: Iterable[PlanRow]) -> str:
    """Rows as a two-column Markdown table; alerts in bold with a warning sign."""
    lines = ["| | |", "|---|---|"]
    for row in rows:
        value = row.value.replace("|", "\\|")
        lines.append(f"| {row.key} | {'⚠ **' + value + '**' if row.alert else value} |")
    return "\n".join(lines)


def request_details(request: RunRequest) -> str:
    """The run's static details: what the operator asked for."""
    return (
        f"**Run {request.run_id} as asked.** Its plan, and where it is, are in its current "
        f"details.\n\n{markdown_table(request_rows(request))}"
    )


def current_details(
    progress: ProgressOutput,
    plan: PlanSummary | None,
    *,
    note: str = "",
    deadline: datetime | None = None,
) -> str:
    """Where the run is, what to do about it, and its plan once made.

    ``note``: who paused it and why, or why it ended; ``deadline``: when an unapproved
    run ends by itself.
    """
    head = _headline(progress, note, deadline)
    if plan is None:
        return head
    return f"{head}\n\n**Plan**\n\n{markdown_table(plan_rows(plan))}"


def _headline(p: ProgressOutput, note: str, deadline: datetime | None) -> str:
    run = p.run_id
    if p.phase == "planning":
        return "**planning**: reading the tasks and checking the run's policy"
    if p.phase == "awaiting_approval":
        ends = f"; unapproved, it ends at {deadline:%Y-%m-%d %H:%M} UTC" if deadline else ""
        return (
            "**waiting for approval** (send signal `approve`, input `{}`; or run "
            f"`python -m starter approve {run}`; `reject` refuses it){ends}"
        )
    counts = _counts(p)
    if p.phase in ("running", "reporting", "completed"):
        said = {"running": "running", "reporting": "reporting", "completed": "completed"}
        head = f"**{said[p.phase]}**: {counts}"
        if p.phase == "completed" and note:
            head = f"**completed**: {note}\n\n{counts}"
        if p.paused and p.phase == "running":
            head = f"**paused by {note or 'someone'}** (send signal `resume`): {counts}"
        return head
    return f"**{p.phase}**: {note or 'no reason given'}; {counts}"


def _counts(p: ProgressOutput) -> str:
    classes = ", ".join(f"{k} {v}" for k, v in sorted(p.by_class.items())) or "none yet"
    excluded = f", {p.excluded} excluded" if p.excluded else ""
    approved = f"approved by {p.approved_by}; " if p.approved_by else ""
    running = ", ".join(p.running) or "-"
    cost = spend_line(p.spend, p.done, p.total)
    return (
        f"{approved}{p.done}/{p.total} pairs done{excluded}; attempts: {classes}; "
        f"in flight: {running}; parallel {p.parallel}" + (f"; {cost}" if cost else "")
    )


def ended_by(err: BaseException) -> str:
    """Why a run failed, in a line: the activity's or child's own error, not the wrapper."""
    cause = err.cause if isinstance(err, ActivityError | ChildWorkflowError) else None
    return str(cause or err) or type(err).__name__


def plan_summary(request: RunRequest) -> str:
    """Summary of ``plan_run`` (and the run's static summary): what it plans."""
    source = suite_of(request) or f"rerun of {request.rerun_of}"
    return f"{source} · {request.agent.name} · {request.agent.model}"


def page_summary(offset: int, limit: int, total: int) -> str:
    """Summary of ``plan_page``: which tasks it reads."""
    return f"tasks {offset + 1}-{min(offset + limit, total)} of {total}"


def pair_details(arms: Iterable[ArmProgress]) -> str:
    """A pair's current details: each arm's attempt and what it waits for."""
    return "\n".join(f"- {_arm_line(arm)}" for arm in arms)


def _arm_line(arm: ArmProgress) -> str:
    head = f"**{arm.lane}** attempt {arm.attempt}"
    after = f" after {arm.last_class}" if arm.last_class else ""
    until = f" until {arm.retry_at:%H:%M:%S} UTC" if arm.retry_at else ""
    said = {
        "running": "running",
        "backoff": f"waits to retry{after}{until}",
        "paused": "held: the run is paused (send the run signal `resume`)",
        "waiting_account": f"waits for an account{until}: {arm.note}",
        "done": f"done: {arm.last_class}",
    }
    return f"{head}: {said[arm.state]}"
