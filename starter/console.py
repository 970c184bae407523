"""Terminal output: the plan, progress and result tables (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from durabench.models import PlanSummary, ProgressOutput, RunResult
from durabench.report import cell_text, comparison_lines, headline
from durabench.settings import Settings

__all__ = ["console", "errors", "plan_table", "progress_line", "result_tables", "ui_url"]

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)


def ui_url(settings: Settings, run_id: str) -> str:
    """The run's page in the Web UI of the embedded server, or where to look otherwise."""
    path = f"/namespaces/{settings.namespace}/workflows/run%2F{run_id}"
    if settings.temporal_address:
        return f"{path} on the Web UI of {settings.temporal_address}"
    return f"http://localhost:{settings.ui_port}{path}"


def plan_table(plan: PlanSummary) -> Table:
    """The parameters a person confirms before approving."""
    req = plan.request
    table = Table(title=f"Plan of run {req.run_id}", show_header=False)
    attempts = plan.task_count * len(plan.lanes)
    source = plan.selection_file or req.source
    if plan.selection_file and req.suite:
        source = f"{req.suite} from {plan.selection_file}"
    rows = [
        ("model", req.model),
        ("suite" if not plan.selection_file else "selection", source),
        ("agent", req.agent),
        ("config mode", f"{req.config_mode} ({', '.join(plan.lanes)})"),
        ("parallel slots", str(req.parallel)),
        ("category", req.category),
        ("tasks", str(plan.task_count)),
        ("attempts", f"{len(plan.lanes)} per task, {attempts} in all (+ infra retries)"),
        ("containers", f"{attempts}, at most {req.parallel * len(plan.lanes)} at once"),
        ("agent-hours (upper bound)", f"{plan.estimated_agent_hours:.2f}"),
        ("infra retries", f"{req.infra_retries} per arm, backoff from {req.infra_backoff_sec:g} s"),
        ("results", plan.results_dir),
    ]
    if plan.account_slots is not None:
        rows.append(("accounts", f"{plan.account_slots} usable slots; {plan.accounts_note}"))
    if req.rerun_of:
        rows.append(("rerun of", f"{req.rerun_of} ({req.rerun} tasks)"))
    if plan.unpaired:
        rows.append(
            (
                "[red]unpaired[/]",
                f"[red]{len(plan.unpaired)} task(s) without counterpart "
                "(ALLOW_UNPAIRED_SINGLE_CONFIG)[/]",
            )
        )
    if plan.mcp_env_missing:
        rows.append(("[red]MCP lane[/]", f"[red]{', '.join(plan.mcp_env_missing)} unset[/]"))
    for key, value in rows:
        table.add_row(key, value)
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
    return f"{phase}: {done}; attempts: {classes}; in flight: {running}"


def result_tables(result: RunResult) -> list[Table | str]:
    """Per task and lane (best | mean), the paired comparison, totals, then what went wrong."""
    card = result.scorecard
    if card is None:
        return ["(these results have no scorecard: run `python -m starter report <run-id>`)"]
    tasks = Table(title=f"Run {result.plan.request.run_id}: best | mean reward")
    tasks.add_column("task")
    for lane in result.plan.lanes:
        tasks.add_column(lane)
    cells = {(c.task_id, c.lane): c for c in card.cells}
    notes: list[Table | str] = []
    for t in result.plan.tasks:
        row = [t.task_id + (" (excluded)" if t.task_id in result.excluded else "")]
        for lane in result.plan.lanes:
            cell = cells[(t.task_id, lane)]
            marks = []
            for text in cell.daggers:
                notes.append(f"†{len(notes) + 1} {t.task_id} / {lane} {text}")
                marks.append(len(notes))
            row.append(cell_text(cell, marks))
        tasks.add_row(*row)
    said = headline(result)
    out: list[Table | str] = [*([f"[bold]{escape(said)}[/]"] if said else []), tasks, *notes]
    if card.comparison is not None:
        out += [line[2:] for line in comparison_lines(card.comparison)]
    totals = Table(title="Tokens and cost")
    for col in ("lane", "attempts", "input", "output", "cost (USD)"):
        totals.add_column(col)
    for tot in card.totals:
        totals.add_row(
            tot.lane,
            str(tot.attempts),
            f"{tot.input_tokens:,}",
            f"{tot.output_tokens:,}",
            f"{tot.cost_usd:.2f}",
        )
    out.append(totals)
    out += [f"[yellow]excluded[/] {task}: {why}" for task, why in sorted(result.excluded.items())]
    out += [
        f"{a.task_id} / {a.lane} / attempt {a.attempt}: {a.exit_class}: {a.reason}"
        + (f" (verifier: {a.verifier_error})" if a.verifier_error else "")
        for a in result.attempts
        if a.exit_class != "completed" or a.verifier_error
    ]
    return out
