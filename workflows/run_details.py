"""What the Temporal Web UI shows of a run: its details, in Temporal's Markdown.

Static details are set when the run starts (what was asked; the plan is not made yet).
Current details follow the run: the plan and how to approve it while it waits, then
progress and pauses, then how it ended. They are metadata, not commands: setting them
changes no history, so old histories replay as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from durabench.models.pair import ArmProgress
    from durabench.models.run import PlanSummary, RunRequest
    from durabench.models.suite_run import ProgressOutput
    from durabench.planning.rows import PlanRow, plan_rows, request_rows
    from durabench.spend.projection import spend_line
    from durabench.text_safety import md_escape
    from durabench.wording import counted

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
        """--name approve --input '{"approver": "your name"}'` (add --address HOST:PORT off the """
        "default server)"
    )


def approval_summary(plan: PlanSummary, timeout: timedelta) -> str:
    """Summary of the approval timer: the plan, how to approve or reject, when it expires.

    The history keeps it, so the Web UI shows it where the run opens with no worker
    running (current details come from a query, which needs one).
    """
    rows = [r for r in plan_rows(plan) if r.key in _ASKED or r.alert]
    said = " · ".join(f"{'⚠ ' if r.alert else ''}{r.key}: {r.value}" for r in rows)
    tasks, lanes = plan.task_count, len(plan.lanes)
    return (
        f"waiting for approval: {counted(tasks, 'task')} × {counted(lanes, 'lane')}, at most "
        f"{plan.estimated_agent_hours:.2f} agent-hours; approve: "
        f"{approve_hint(plan.request.run_id)}; signal `reject` refuses it; unapproved, it "
        f"expires after {timeout}. Plan: {said}"
    )


__all__ = [
    "approval_summary",
    "approve_hint",
    "current_details",
    "ended_by",
    "markdown_rows",
    "pair_details",
    "page_summary",
    "plan_summary",
    "request_details",
    "start_story",
    "start_summary",
]


def markdown_rows(rows: Iterable[PlanRow]) -> str:
    """Rows as a Markdown list of ``key: value``; alerts in bold with a warning sign.

    A list, not a table: the Web UI draws a table's cells with no space between them, so
    a label ran into its value there ("approval timeout86400 s").
    """
    lines = []
    for row in rows:
        value = md_escape(row.value)
        lines.append(
            f"- {'⚠ **' if row.alert else ''}{md_escape(row.key)}: {value}"
            + ("**" if row.alert else "")
        )
    return "\n".join(lines)


def _same(text: str) -> str:
    return text


def start_story(
    request: RunRequest,
    plan: PlanSummary | None,
    text: Callable[[str], str] = _same,
    code: Callable[[str], str] = _same,
) -> tuple[str, ...]:
    """What the run will do, what it costs in agent time and how to approve it, in lines.

    The Web UI shows the run's input first, so these lines lead it. ``plan``: the plan as
    made where the run was started, or ``None`` when a worker elsewhere makes it. ``text``
    and ``code`` mark up the words and the commands (Markdown: escaped, and code spans,
    which the UI's renderer leaves as typed: no curly quotes, no en dash for ``--``).
    """
    run = request.run_id
    what = text(f"{plan_summary(request)} · {request.config_mode}")
    if plan is None:
        cost = (
            "agent time: in the plan a worker makes (see the approval timer below, or "
            f"{code(f'python -m starter status {run}')})"
        )
    else:
        lanes, tasks = len(plan.lanes), plan.task_count
        what = f"{what}: {counted(tasks, 'task')} × {counted(lanes, 'lane')}"
        what += f" ({text(', '.join(plan.lanes))})"
        cost = (
            f"agent time: at most {plan.estimated_agent_hours:.2f} agent-hours "
            f"({tasks * lanes} agent sessions, each within its task's time limit)"
        )
    return (
        what,
        cost,
        f"nothing starts until a person approves: {code(f'python -m starter approve {run}')}",
        "or here: More Actions → Send a Signal → approve, input "
        + code('{"approver": "your name"}'),
        f"or end it: {code(f'python -m starter reject {run} --reason why')}",
    )


def start_summary(request: RunRequest, plan: PlanSummary | None) -> str:
    """The run's static summary: its story's first lines, on one line."""
    what, cost, approve, *_ = start_story(request, plan)
    return f"{what}; {cost}; {approve}"


def request_details(request: RunRequest, plan: PlanSummary | None = None) -> str:
    """The run's static details: what it will do and how to approve it, then what was asked.

    ``plan``: the plan as made where the run was started (its rows follow), or ``None``.
    """
    lines = start_story(request, plan, text=md_escape, code=lambda c: f"`{c}`")
    story = "\n".join(f"- {line}" for line in lines)
    rows = plan_rows(plan) if plan is not None else request_rows(request)
    said = "Its plan" if plan is not None else "What was asked (the plan follows in history)"
    return f"**Run {request.run_id}**\n\n{story}\n\n**{said}**\n\n{markdown_rows(rows)}"


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
    return f"{head}\n\n**Plan**\n\n{markdown_rows(plan_rows(plan))}"


def _headline(p: ProgressOutput, note: str, deadline: datetime | None) -> str:
    run = p.run_id
    if p.phase == "planning":
        return "**planning**: reading the tasks and checking the run's policy"
    if p.phase == "awaiting_approval":
        ends = f"; unapproved, it ends at {deadline:%Y-%m-%d %H:%M} UTC" if deadline else ""
        return (
            '**waiting for approval** (send signal `approve`, input `{"approver": "your name"}`; '
            "or run "
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
