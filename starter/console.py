"""Terminal output: the plan, progress and result tables (rich).

Text from a task, an agent or a service reaches the terminal only through :func:`shown`
(inside rich markup), :func:`starter.refusal.plain` (a line printed as it is) or
:class:`starter.refusal.Refusal` (a command's error): each makes it one line of data, so
it cannot end its line and print a forged one, run markup or a link, or send an escape
sequence to the terminal.
"""

from __future__ import annotations

import getpass
import json
import os
from datetime import timedelta
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from durabench.models.results import RunResult
from durabench.models.run import PlanSummary
from durabench.models.suite_run import ProgressOutput
from durabench.planning.rows import plan_rows
from durabench.results.cost_report import cost_cell, cost_lines
from durabench.results.report import cell_text, comparison_lines, headline, service_score
from durabench.results.story import result_story
from durabench.settings.values import Settings
from durabench.spend.projection import spend_line
from durabench.text_safety import one_line

__all__ = [
    "ANSWER_WITHIN",
    "approval_hint",
    "console",
    "emit",
    "errors",
    "no_worker",
    "plan_table",
    "progress_line",
    "result_tables",
    "shown",
    "signal_command",
    "ui_url",
]

DEFAULT_PORT = 7233
"""The port the ``temporal`` CLI connects to when no ``--address`` is given."""

OFF_TERMINAL_WIDTH = 1000
"""Width of tables when output goes to a pipe, a log or CI (unless ``COLUMNS`` says)."""


def _console(*, stderr: bool = False) -> Console:
    """A console that never hard-wraps off a terminal.

    Piped output is read by scripts, logs and CI, and copied from: a URL, a path or a
    command split over two lines no longer works. On a terminal, rich fits the window.
    """
    out = Console(stderr=stderr, highlight=False, emoji=False)  # ":smile:" is text too
    if not out.is_terminal:
        out.soft_wrap = True
        if "COLUMNS" not in os.environ:
            out.width = OFF_TERMINAL_WIDTH
    return out


console = _console()
errors = _console(stderr=True)


def shown(text: str) -> str:
    r"""``text`` as rich markup that prints it as written: data, never markup or escapes.

    A task id, a reason, a final message or a note can come from an agent, a task or a
    service; ``[bold]`` in it stays ``[bold]``, and an escape sequence or a line break is
    written out (as ``\x1b``, ``\n``), so a build error cannot print lines of its own.
    """
    escaped = escape(one_line(text))
    # rich doubles a final backslash so it cannot escape a tag that follows; an empty span
    # after it makes the pair one backslash wherever the text goes, before a tag or not
    return escaped + "[bold][/bold]" if escaped.endswith("\\") else escaped


def emit(text: str, out: Path | None) -> None:
    """Print ``text`` as it is (for pipes), or write it to ``out`` and say so."""
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text)
        console.print(f"Wrote {shown(str(out))}")


def ui_url(settings: Settings, run_id: str) -> str:
    """The run's page in the Web UI: ``DURABENCH_UI_URL``'s, or the embedded server's.

    A server durabench did not start has its UI wherever it was deployed: without
    ``DURABENCH_UI_URL`` the page is named, with what to set for a link.
    """
    path = f"/namespaces/{settings.namespace}/workflows/run%2F{run_id}"
    if settings.ui_url:
        return settings.ui_url.rstrip("/") + path
    if settings.temporal_address:
        return f"{path} in its Temporal Web UI (set DURABENCH_UI_URL to the UI's address)"
    return f"http://localhost:{settings.ui_port}{path}"


def signal_command(settings: Settings, run_id: str, name: str, given: str = "{}") -> str:
    """``temporal workflow signal`` of ``name`` with input ``given``, on durabench's server."""
    where = ""
    if settings.address not in (f"localhost:{DEFAULT_PORT}", f"127.0.0.1:{DEFAULT_PORT}"):
        where += f" --address {settings.address}"
    if settings.namespace != "default":
        where += f" --namespace {settings.namespace}"
    return (
        f"temporal workflow signal{where} --workflow-id run/{run_id} --name {name} "
        f"--input '{given}'"
    )


def approval_hint(settings: Settings, run_id: str) -> str:
    """The ways to approve a run, each as it can be copied, each recording who approved.

    A signal's input names the approver: the dev server's Web UI sends no identity, so an
    input of ``{}`` there is recorded as approved by nobody ("not named").
    """
    named = json.dumps({"approver": getpass.getuser()})
    return (
        "Waiting for approval. Approve with any of:\n"
        f"  python -m starter approve {run_id}\n"
        f"  {signal_command(settings, run_id, 'approve', named)}\n"
        f"  the Web UI: {ui_url(settings, run_id)} → Send a Signal → approve, "
        f'input {{"approver": "your name"}}'
    )


ANSWER_WITHIN = timedelta(seconds=5)
"""How long a worker gets to answer a query before :func:`no_worker` is said."""


def no_worker(run_id: str) -> str:
    """What to do when no worker answers for a run (queries and updates wait for one)."""
    return (
        f"no worker answers for run {run_id}: start one with `python worker.py` "
        "(or `python -m starter run` again for a new run)"
    )


def plan_table(plan: PlanSummary) -> Table:
    """The parameters a person confirms before approving (alerts in red)."""
    table = Table(title=f"Plan of run {plan.request.run_id}", show_header=False)
    for row in plan_rows(plan):
        key, value = shown(row.key), shown(row.value)
        table.add_row(*((f"[red]{key}[/]", f"[red]{value}[/]") if row.alert else (key, value)))
    return table


def progress_line(p: ProgressOutput) -> str:
    """One line of progress."""
    classes = ", ".join(f"{k} {v}" for k, v in sorted(p.by_class.items())) or "none yet"
    running = ", ".join(p.running) or "-"
    excluded = f"; {p.excluded} excluded" if p.excluded else ""
    if p.ended_abnormally:  # terminated or reset away: the operator should know which
        excluded += f" (ended without finishing: {', '.join(p.ended_abnormally)})"
    done = f"{p.done}/{p.total} pairs done{excluded}"
    phase = f"{p.phase} (paused)" if p.paused else p.phase
    approved = f"; approved by {p.approved_by}" if p.approved_by else ""
    approved += f" (note: {p.approval_note})" if p.approved_by and p.approval_note else ""
    cost = spend_line(p.spend, p.done, p.total)
    cost = f"; {cost}" if cost else ""
    return shown(f"{phase}: {done}; attempts: {classes}; in flight: {running}{cost}{approved}")


def result_tables(result: RunResult) -> list[Table | str]:
    """Per task and lane (best | mean), the paired comparison, totals, then what went wrong."""
    card = result.scorecard
    if card is None:
        return ["(these results have no scorecard: run `python -m starter report <run-id>`)"]
    tasks = Table(title=shown(f"Run {result.plan.request.run_id}: best | mean reward"))
    tasks.add_column("task")
    for lane in result.plan.lanes:
        tasks.add_column(shown(lane))
    cells = {(c.task_id, c.lane): c for c in card.cells}
    notes: list[Table | str] = []
    for t in result.plan.tasks:
        row = [shown(t.task_id + (" (excluded)" if t.task_id in result.excluded else ""))]
        for lane in result.plan.lanes:
            cell = cells[(t.task_id, lane)]
            marks = []
            for text in cell.daggers:
                notes.append(shown(f"†{len(notes) + 1} {t.task_id} / {lane} {text}"))
                marks.append(len(notes))
            row.append(shown(cell_text(cell, marks)))
        tasks.add_row(*row)
    story, said = result_story(result), headline(result)
    out: list[Table | str] = [f"[bold]{shown(story)}[/]"]
    out += [*([f"[bold]{shown(said)}[/]"] if said and said != story else []), tasks, *notes]
    if result.plan.request.service is not None:
        out += [shown(service_score(result, lane)) for lane in result.plan.lanes]
    if card.comparison is not None:
        out += [shown(line[2:]) for line in comparison_lines(card.comparison)]
    if card.cost is not None:
        out += [shown(line[2:]) for line in cost_lines(card.cost, result.attempts)]
    totals = Table(title="Tokens and cost")
    for col in ("lane", "attempts", "input", "output", "cost (USD)"):
        totals.add_column(col)
    for tot in card.totals:
        totals.add_row(
            shown(tot.lane),
            str(tot.attempts),
            f"{tot.input_tokens:,}",
            f"{tot.output_tokens:,}",
            shown(cost_cell(tot)),
        )
    out.append(totals)
    out += [
        f"[yellow]excluded[/] {shown(f'{task}: {why}')}"
        for task, why in sorted(result.excluded.items())
    ]
    out += [
        shown(
            f"{a.task_id} / {a.lane} / attempt {a.attempt}: {a.exit_class}: {a.reason}"
            + (f" (verifier: {a.verifier_error})" if a.verifier_error else "")
        )
        for a in result.attempts
        if a.exit_class != "completed" or a.verifier_error
    ]
    return out
