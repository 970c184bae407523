"""The self-contained HTML report: inline CSS and SVG, nothing fetched from the network."""

from __future__ import annotations

import html
import re
from collections.abc import Container
from urllib.parse import quote

from durabench.models.results import AttemptResult, RunResult
from durabench.models.scorecard import PairedComparison, Scorecard
from durabench.results.cost_report import cost_lines, cost_table
from durabench.results.html_policy import CSP_META
from durabench.results.report import (
    cell_text,
    comparison_lines,
    forgeable_note,
    headline,
    left_out,
    signal_names,
    totals_table,
)
from durabench.results.run_versions import version_lines
from durabench.settings.paths import TRAJECTORY
from durabench.text_safety import visible_controls

__all__ = ["headline_html", "render_html"]


def escape(text: str) -> str:
    """``text`` as inert HTML: markup escaped, control characters written out."""
    return html.escape(visible_controls(text))


_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; }
body { color: #1d2330; padding: 0 1rem; } h1 { font-size: 1.5rem; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; } svg { max-width: 100%; height: auto; }
td { overflow-wrap: anywhere; min-width: 3rem; } .headline { font-size: 1.05rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #dde; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #dde; padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: #f3f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.missing { color: #8a8f99; } .warn { color: #b3261e; font-weight: 600; } .note { color: #555; }
.legend span { display: inline-block; width: .8rem; height: .8rem; margin: 0 .3rem 0 1rem; }
"""
_COLORS = ("#4c72b0", "#dd8452", "#55a868")


_LABEL_CHARS = 48
"""A task label longer than this is cut with an ellipsis (the bar's tooltip has it whole)."""
_CHAR_PX = 6.5
"""A generous width of one character at the labels' font size (10px), for the layout."""
_SLANT = (0.82, 0.57)
"""cos and sin of the labels' 35° slant: how far a label reaches right and down."""


def _label(task: str) -> str:
    return task if len(task) <= _LABEL_CHARS else task[: _LABEL_CHARS - 1] + "…"


def _bars(result: RunResult, card: Scorecard) -> str:
    """Grouped bars: mean reward per task and lane, slanted task labels kept inside.

    The SVG is as large as its longest label needs and scales down with the window.
    """
    lanes, tasks = result.plan.lanes, [t.task_id for t in result.plan.tasks]
    cells = {(c.task_id, c.lane): c for c in card.cells}
    bar, gap, height, left = 14, 18, 160, 40
    longest = max((len(_label(t)) for t in tasks), default=0) * _CHAR_PX
    group = len(lanes) * bar + gap
    width = left + len(tasks) * group + max(20.0, longest * _SLANT[0] - group / 2)
    full_height = height + 24 + longest * _SLANT[1]
    parts = [
        f'<svg id="rewards-chart" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{full_height:.0f}" viewBox="0 0 {width:.0f} {full_height:.0f}" role="img" '
        'aria-label="mean reward per task and lane">',
        f'<line x1="{left}" y1="{height}" x2="{width:.0f}" y2="{height}" stroke="#888"/>',
    ]
    for tick in (0.0, 0.5, 1.0):
        y = height - tick * (height - 10)
        parts.append(f'<text x="4" y="{y + 4:.0f}" font-size="10">{tick:.1f}</text>')
    for i, task in enumerate(tasks):
        x0 = left + gap / 2 + i * group
        for j, lane in enumerate(lanes):
            mean = cells[(task, lane)].mean
            h = 0.0 if mean is None else max(mean, 0.0) * (height - 10)
            parts.append(
                f'<rect class="bar" data-task="{escape(task)}" data-lane="{escape(lane)}" '
                f'x="{x0 + j * bar:.0f}" y="{height - h:.1f}" width="{bar - 2}" height="{h:.1f}" '
                f'fill="{_COLORS[j % len(_COLORS)]}"><title>{escape(task)} / {escape(lane)}: '
                f"{'-' if mean is None else f'{mean:.2f}'}</title></rect>"
            )
        label_x = x0 + len(lanes) * bar / 2
        parts.append(
            f'<text x="{label_x:.0f}" y="{height + 12}" font-size="10" '
            f'transform="rotate(35 {label_x:.0f} {height + 12})">{escape(_label(task))}'
            f"<title>{escape(task)}</title></text>"
        )
    parts.append("</svg>")
    legend = "".join(
        f'<span style="background:{_COLORS[j % len(_COLORS)]}"></span>{escape(lane)}'
        for j, lane in enumerate(lanes)
    )
    return '<div class="scroll">' + "".join(parts) + f'</div><div class="legend">{legend}</div>'


def _delta(c: PairedComparison) -> str:
    """The mean difference on a [-1, 1] axis with its confidence interval."""
    if c.mean_delta is None or c.ci_low is None or c.ci_high is None:
        return '<p class="missing">No pair could be compared.</p>'
    width, mid = 520, 260

    def x(v: float) -> float:
        return mid + max(-1.0, min(1.0, v)) * 240

    return (
        f'<svg id="delta-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="70" '
        f'viewBox="0 0 {width} 70" role="img" aria-label="mean difference with 95% CI">'
        f'<line x1="20" y1="40" x2="500" y2="40" stroke="#888"/>'
        f'<line x1="{mid}" y1="28" x2="{mid}" y2="52" stroke="#888" stroke-dasharray="3"/>'
        f'<text x="14" y="62" font-size="10">−1</text>'
        f'<text x="{mid - 3}" y="62" font-size="10">0</text>'
        f'<text x="494" y="62" font-size="10">+1</text>'
        f'<line class="ci" x1="{x(c.ci_low):.1f}" y1="40" x2="{x(c.ci_high):.1f}" y2="40" '
        f'stroke="#b3261e" stroke-width="4"/>'
        f'<circle class="mean" cx="{x(c.mean_delta):.1f}" cy="40" r="6" fill="#1d2330"/>'
        f'<text x="{x(c.mean_delta):.1f}" y="20" font-size="11" text-anchor="middle">'
        f"{c.mean_delta:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}]</text></svg>"
    )


def _table(table_id: str, header: list[str], rows: list[list[str]], row_class: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        f'<tr class="{row_class}">' + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return (
        f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _cost(result: RunResult, card: Scorecard) -> list[str]:
    """The cost difference between the lanes, and per pair (:mod:`.cost_report`)."""
    c = card.cost
    if c is None:
        return []
    parts = [f"<h2>Cost: {escape(c.full_lane)} − {escape(c.baseline_lane)}</h2>", "<ul>"]
    parts += [f"<li>{escape(line[2:])}</li>" for line in cost_lines(c, result.attempts)]
    parts.append("</ul>")
    if c.tasks:
        header, rows = cost_table(c)
        parts.append(_table("cost", header, [[escape(cell) for cell in row] for row in rows]))
    return parts


def _cells_table(result: RunResult, card: Scorecard) -> str:
    cells = {(c.task_id, c.lane): c for c in card.cells}
    rows, notes = [], []
    for t in result.plan.tasks:
        row = [
            escape(t.task_id)
            + (" <em>(pair excluded)</em>" if t.task_id in result.excluded else "")
        ]
        for lane in result.plan.lanes:
            cell = cells[(t.task_id, lane)]
            marks = []
            for text in cell.daggers:
                notes.append(f"{escape(t.task_id)} / {escape(lane)} {escape(text)}")
                marks.append(len(notes))
            css = "missing" if cell.mean is None else "num"
            row.append(f'<span class="{css}">{escape(cell_text(cell, marks))}</span>')
        rows.append(row)
    header = ["task", *(f"{lane} (best | mean)" for lane in result.plan.lanes)]
    out = _table("cells", header, rows, row_class="task-row")
    if notes:
        out += '<ol class="note">' + "".join(f"<li>† {n}</li>" for n in notes) + "</ol>"
    return out


def _attempt_links(a: AttemptResult, trajectories: Container[tuple[str, str, int]]) -> str:
    """The attempt's number, linking its directory, and its trajectory when one was kept."""
    where = f"tasks/{quote(a.task_id)}/{quote(a.lane)}/attempt-{a.attempt}"
    out = f'<a href="{where}/">{a.attempt}</a>'
    if (a.task_id, a.lane, a.attempt) in trajectories:
        out += f' · <a href="{where}/{TRAJECTORY}">trajectory</a>'
    return out


def _versions(result: RunResult) -> list[str]:
    """The report's lines on CLI versions and images, as a list."""
    lines = [f"<li>{escape(line[2:].replace('**', ''))}</li>" for line in version_lines(result)]
    return ["<ul>", *lines, "</ul>"] if lines else []


def _messages(result: RunResult, trajectories: Container[tuple[str, str, int]]) -> str:
    """Each attempt's class, signals and the start of its last message."""
    rows = [
        [
            escape(a.task_id),
            escape(a.lane),
            _attempt_links(a, trajectories),
            escape(a.exit_class),
            ('<span class="warn">⚠ false completion</span> ' if a.signals.false_completion else "")
            + escape(", ".join(signal_names(a)) or "-"),
            escape(" ".join(a.last_message.split())[:200]),
        ]
        for a in sorted(result.attempts, key=lambda a: (a.task_id, a.lane, a.attempt))
    ]
    header = ["task", "lane", "attempt", "class", "signals", "last message"]
    return _table("messages", header, rows)


def _approval(result: RunResult) -> list[str]:
    """Who approved the run, and when, as ``report.md`` says it."""
    if result.approval is None:
        return []
    when = result.approval.approved_at.isoformat() if result.approval.approved_at else "?"
    return [f'<p id="approval">approved by {escape(result.approval.approver)} at {when}</p>']


def headline_html(result: RunResult) -> str:
    """The report's plain sentence when infrastructure decided what was measured, or ``""``.

    Its command (in backticks, as ``report.md`` marks it) is set as code.
    """
    said = headline(result)
    if not said:
        return ""
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(said))
    return f'<p id="headline" class="headline warn">{text}</p>'


def render_html(
    result: RunResult,
    card: Scorecard,
    trajectories: Container[tuple[str, str, int]] = frozenset(),
) -> str:
    """The run's ``report.html``; links are relative to the run's directory.

    ``trajectories`` are the attempts (task, lane, number) that kept a ``trajectory.json``.
    """
    req = result.plan.request
    title = f"durabench run {req.run_id}"
    lanes = escape(", ".join(result.plan.lanes))
    parts = [
        f"<!doctype html><html lang=en><head><meta charset=utf-8>{CSP_META}",
        f"<title>{escape(title)}</title>",
        f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>",
        f"<p>suite <b>{escape(req.suite)}</b> · agent <b>{escape(req.agent.name)}</b> · model "
        f"<b>{escape(req.agent.model)}</b> · {escape(req.config_mode)} ({lanes})"
        f" · category {escape(req.category)}</p>",
        *_approval(result),
        *_versions(result),
        headline_html(result),
        "<h2>Mean reward per task</h2>",
        _bars(result, card),
        "<h2>Per task</h2>",
        _cells_table(result, card),
    ]
    if card.comparison is not None:
        c = card.comparison
        parts += [f"<h2>Paired comparison: {escape(c.full_lane)} − {escape(c.baseline_lane)}</h2>"]
        parts += [_delta(c), "<ul>"]
        parts += [f"<li>{escape(line[2:])}</li>" for line in comparison_lines(c)]
        parts += ["</ul>"]
    parts += _cost(result, card)
    header, rows = totals_table(card)
    totals = [[escape(cell) for cell in row] for row in rows]
    parts += ["<h2>Tokens and cost</h2>", _table("totals", header, totals)]
    parts += ["<h2>Last messages</h2>", _messages(result, trajectories)]
    excluded = [
        [escape(e.task_id), escape(e.lane), str(e.attempt), escape(e.exit_class), escape(e.reason)]
        for e in card.excluded_attempts
    ]
    parts += [
        "<h2>Excluded attempts</h2>",
        _table("excluded", ["task", "lane", "attempt", "class", "why"], excluded),
    ]
    left = [
        [escape(t), escape(lane), str(n), escape(note)] for t, lane, n, note in left_out(result)
    ]
    if forgeable := forgeable_note(result):
        parts += ["<h2>Rewards the submission could write</h2>", f"<p>{escape(forgeable)}</p>"]
    if left:
        parts += [
            "<h2>Left out by the read limits</h2>",
            _table("left-out", ["task", "lane", "attempt", "what"], left),
        ]
    parts.append("</body></html>")
    return "\n".join(parts)
