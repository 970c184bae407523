"""The Markdown report (``report.md``) and lane totals, from a run's results alone.

Every text a task, an agent or a service wrote (reasons, build and verifier errors, final
messages, file names, the approver's name) goes through :func:`md_escape` or
:func:`md_code`: it shows as written and cannot add a headline, a table row or HTML.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from durabench.models.results import AttemptResult, LaneSummary, RunResult
from durabench.models.run import NOT_NAMED, Approval
from durabench.models.scorecard import Cell, PairedComparison, Scorecard
from durabench.results.cost_report import cost_cell, cost_lines, cost_table
from durabench.results.not_run import not_run_lines
from durabench.results.run_versions import version_lines
from durabench.results.story import headline, result_story
from durabench.text_safety import md_code, md_escape

__all__ = [
    "approval_line",
    "cell_text",
    "comparison_lines",
    "forgeable_note",
    "headline",
    "note_of",
    "render_markdown",
    "service_score",
    "signal_names",
    "summarize_lanes",
    "totals_table",
]


def summarize_lanes(
    attempts: Iterable[AttemptResult], lanes: Iterable[str], excluded: Mapping[str, str]
) -> tuple[LaneSummary, ...]:
    """Totals per lane: infra attempts, missing rewards and excluded pairs are not scored."""
    attempts = list(attempts)
    out = []
    for lane in lanes:
        mine = [a for a in attempts if a.lane == lane]
        scored = [a.reward for a in mine if a.included and a.task_id not in excluded]
        rewards = [r for r in scored if r is not None]
        out.append(
            LaneSummary(
                lane=lane,
                attempts=len(mine),
                scored=len(rewards),
                mean_reward=sum(rewards) / len(rewards) if rewards else None,
                passed=sum(1 for r in rewards if r >= 1.0),
                by_class=dict(Counter(a.exit_class for a in mine)),
            )
        )
    return tuple(out)


def cell_text(cell: Cell, marks: Iterable[int] = ()) -> str:
    """``best | mean`` with † marks, or ``- | -`` with the reason."""
    if cell.best is None or cell.mean is None:
        return f"- | - ({cell.missing_reason})"
    daggers = "".join(f" †{m}" for m in marks)
    return f"{cell.best:.2f} | {cell.mean:.2f}{daggers}"


def signal_names(a: AttemptResult) -> list[str]:
    """The signals set on an attempt's last message."""
    return [name for name, on in a.signals.model_dump().items() if on]


def comparison_lines(c: PairedComparison) -> list[str]:
    """The paired comparison in a few sentences."""
    n = len(c.tasks)
    lines = [
        f"- pairs compared: {n}; dropped: {c.dropped_excluded} with an excluded arm, "
        f"{c.dropped_unscored} with an arm that has no scored attempt; not run (no attempt "
        f"in either arm): {c.dropped_not_run}",
    ]
    if c.mean_delta is not None:
        lines.append(
            f"- mean difference ({c.full_lane} − {c.baseline_lane}): {c.mean_delta:+.3f}, "
            f"95% CI [{c.ci_low:+.3f}, {c.ci_high:+.3f}] "
            f"(paired bootstrap over tasks, {c.resamples:,} resamples, seed {c.seed})"
        )
    lines.append(
        f"- pass = mean reward ≥ {c.pass_threshold:g}: both pass {c.both_pass}, both fail "
        f"{c.both_fail}, only {c.baseline_lane} {c.baseline_only}, only {c.full_lane} "
        f"{c.full_only}; McNemar exact p = {c.mcnemar_p:.4g}"
    )
    return lines


def _task_table(result: RunResult, card: Scorecard) -> list[str]:
    lanes = result.plan.lanes
    cells = {(c.task_id, c.lane): c for c in card.cells}
    notes: list[str] = []
    lines = ["| task | " + " | ".join(f"{lane} (best \\| mean)" for lane in lanes) + " |"]
    lines.append("|---" * (1 + len(lanes)) + "|")
    for t in result.plan.tasks:
        row = []
        for lane in lanes:
            cell = cells[(t.task_id, lane)]
            marks = []
            for text in cell.daggers:
                notes.append(f"{len(notes) + 1}. {md_escape(f'{t.task_id} / {lane} {text}')}")
                marks.append(len(notes))
            row.append(_md_cell(cell, marks))
        excluded = " (pair excluded)" if t.task_id in result.excluded else ""
        lines.append(f"| {md_escape(t.task_id)}{excluded} | " + " | ".join(row) + " |")
    if notes:
        lines += ["", "† included, but did not complete:", "", *notes]
    return lines


def _md_cell(cell: Cell, marks: Iterable[int]) -> str:
    """:func:`cell_text` in a Markdown table cell: the missing reason is escaped."""
    if cell.best is None or cell.mean is None:
        return f"- \\| - ({md_escape(cell.missing_reason)})"
    return cell_text(cell, marks).replace(" | ", " \\| ")


def service_score(result: RunResult, lane: str) -> str:
    """A lane's service final score, labelled: it is on the service's scale, not a reward."""
    score = result.service_scores.get(lane)
    if score is None:
        return f"service final score, {lane}: not scored (see the worker log)"
    return (
        f"service final score, {lane}: {score:g} (the service's own number, on its scale; "
        "rewards in this report are 0-1)"
    )


def _header(result: RunResult) -> list[str]:
    req = result.plan.request
    story = result_story(result)
    lines = [
        f"# durabench run {md_escape(req.run_id)}",
        "",
        f"**{md_escape(story)}**",
        "",
        f"- suite: {md_code(req.source)}; agent: {md_code(req.agent.name)}; "
        f"model: {md_code(req.agent.model)}",
        f"- config mode: {req.config_mode} ({md_escape(', '.join(result.plan.lanes))}); "
        f"category: {md_escape(req.category)}; parallel: {result.plan.parallel}",
    ]
    if result.approval is not None:
        said = md_escape(approval_line(result.approval))
        named = result.approval.approver != NOT_NAMED
        lines.append(f"- {said}" if named else f"- **{said}**")
    if req.service is not None:
        dataset = f", dataset {req.service.dataset}" if req.service.dataset else ""
        graded = f"{req.service.url} ({req.service.api} API{dataset})"
        lines.append(f"- graded by {md_escape(graded)}")
        lines.append(f"  - calls: {md_escape(req.service.calls(req.tasks_from_service))}")
        lines += [f"  - {md_escape(service_score(result, lane))}" for lane in result.plan.lanes]
    if result.plan.selection_file:
        lines.append(f"- selection file: {md_code(result.plan.selection_file)}")
    if req.rerun_of:
        lines.append(f"- rerun of run {md_code(req.rerun_of)} ({req.rerun} tasks)")
    if result.plan.counterparts:
        runs = sorted({c.run_id for c in result.plan.counterparts})
        lines.append(f"- gap-fill: counterparts from run(s) {md_escape(', '.join(runs))}")
    if result.plan.unpaired:
        lines.append(
            f"- **unpaired: {len(result.plan.unpaired)} task(s) ran without a counterpart "
            "(ALLOW_UNPAIRED_SINGLE_CONFIG=true)**"
        )
    if result.plan.mcp_env_missing:
        missing = md_escape(", ".join(result.plan.mcp_env_missing))
        lines.append(f"- **MCP lane ran without {missing}**")
    lines += [f"- **warning at plan time: {md_escape(w)}**" for w in result.plan.warnings]
    lines += version_lines(result, md_escape)
    warned = headline(result)
    return [*lines, "", f"**{warned}**"] if warned and warned != story else lines


def approval_line(approval: Approval) -> str:
    """Who approved and when, with the approval's note.

    An approval that named nobody says so, and how to be named.
    """
    when = approval.approved_at.isoformat() if approval.approved_at else "?"
    note = note_of(approval)
    if approval.approver != NOT_NAMED:
        return f"approved by {approval.approver} at {when}{note}"
    return (
        f"approved by: {NOT_NAMED} (at {when}){note}: the approval gave no name and its signal "
        'no identity; approve with input {"approver": "your name"}, or with python -m starter '
        "approve, to be named"
    )


def note_of(approval: Approval) -> str:
    """The approval's note as it follows who approved: ``" (note: …)"``, or ``""``."""
    return f" (note: {approval.note})" if approval.note else ""


def totals_table(card: Scorecard) -> tuple[list[str], list[list[str]]]:
    """The tokens-and-cost table, header and rows as plain text: both reports render it."""
    header = ["lane", "attempts", "input tokens", "output tokens", "cache read", "cache write"]
    header.append("cost (USD)")
    rows = [
        [
            t.lane,
            str(t.attempts),
            f"{t.input_tokens:,}",
            f"{t.output_tokens:,}",
            f"{t.cache_read_tokens:,}",
            f"{t.cache_write_tokens:,}",
            cost_cell(t),
        ]
        for t in card.totals
    ]
    return header, rows


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(md_escape(cell) for cell in header) + " |"]
    lines.append("|" + "---|" * len(header))
    return lines + ["| " + " | ".join(md_escape(cell) for cell in row) + " |" for row in rows]


def _cost(result: RunResult, card: Scorecard) -> list[str]:
    """The cost difference between the lanes, and per pair."""
    c = card.cost
    if c is None:
        return []
    lines = ["", f"## Cost: {c.full_lane} − {c.baseline_lane}", ""]
    lines += cost_lines(c, result.attempts)  # numbers and lane names only, as comparison_lines
    return [*lines, "", *_md_table(*cost_table(c))] if c.tasks else lines


def _messages(result: RunResult) -> list[str]:
    lines = [
        "| task | lane | attempt | class | signals | last message |",
        "|---|---|---|---|---|---|",
    ]
    for a in sorted(result.attempts, key=lambda a: (a.task_id, a.lane, a.attempt)):
        flag = "⚠ " if a.signals.false_completion else ""
        text = md_escape(" ".join(a.last_message.split())[:120])
        lines.append(
            f"| {md_escape(a.task_id)} | {md_escape(a.lane)} | {a.attempt} | {a.exit_class} | "
            f"{flag}{', '.join(signal_names(a)) or '-'} | {text or '-'} |"
        )
    return lines


def render_markdown(result: RunResult, card: Scorecard) -> str:
    """The run's ``report.md``."""
    lines = [*_header(result), "", "## Per task", "", *_task_table(result, card)]
    if card.comparison is not None:
        c = card.comparison
        lines += ["", f"## Paired comparison: {c.full_lane} − {c.baseline_lane}", ""]
        lines += comparison_lines(c)
        if c.tasks:
            lines += [
                "",
                f"| task | {c.baseline_lane} | {c.full_lane} | difference |",
                "|---|---|---|---|",
            ]
            lines += [
                f"| {md_escape(d.task_id)} | {d.baseline:.2f} | {d.full:.2f} | {d.delta:+.2f} |"
                for d in c.tasks
            ]
    lines += _cost(result, card)
    lines += ["", "## Tokens and cost (every attempt, infra included)", ""]
    lines += _md_table(*totals_table(card))
    lines += ["", "## Last messages", "", *_messages(result)]
    false = [a for a in result.attempts if a.signals.false_completion]
    if false:
        lines += [
            "",
            f"⚠ {len(false)} false completion(s): the agent claimed success but changed no file.",
        ]
    if card.excluded_attempts:
        lines += ["", "## Excluded attempts", ""]
        lines += [
            "- "
            + md_escape(f"{e.task_id} / {e.lane} / attempt {e.attempt}: {e.exit_class}: {e.reason}")
            for e in card.excluded_attempts
        ]
    lines += not_run_lines(result)
    if result.excluded:
        lines += ["", "## Excluded pairs", ""]
        lines += [f"- {md_escape(f'{t}: {why}')}" for t, why in sorted(result.excluded.items())]
    if forgeable := forgeable_note(result):
        lines += ["", "## Rewards the submission could write", "", md_escape(forgeable)]
    if left := left_out(result):
        lines += ["", "## Left out by the read limits", ""]
        lines += [
            f"- {md_escape(f'{task} / {lane} / attempt {n}: {note}')}"
            for task, lane, n, note in left
        ]
    return "\n".join(lines) + "\n"


def left_out(result: RunResult) -> list[tuple[str, str, int, str]]:
    """What the worker's read limits left out of each attempt (task, lane, attempt, note).

    An attempt listed here has incomplete logs or an incomplete diff: its agent made files
    too large or too many (``DURABENCH_COLLECT_*``).
    """
    return [
        (a.task_id, a.lane, a.attempt, note)
        for a in sorted(result.attempts, key=lambda a: (a.task_id, a.lane, a.attempt))
        for note in a.left_out
    ]


def forgeable_note(result: RunResult) -> str:
    """The tasks whose tests run the submission as root (its reward could be its own), or ``""``."""
    plan = result.plan
    if not plan.forgeable_tasks:
        return ""
    count = max(plan.forgeable_count, len(plan.forgeable_tasks))
    more = count - len(plan.forgeable_tasks)
    named = ", ".join(plan.forgeable_tasks) + (f" and {more} more" if more else "")
    return (
        f"{count} task(s) run the submission's code as root in their tests (they import "
        f"it, or run code in the workspace), so a submission there could write its own "
        f"reward: {named}."
    )
