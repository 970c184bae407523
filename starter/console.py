"""Terminal output: the plan, progress and result tables (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from durabench.models import ProgressOutput, RunPlan, RunResult
from durabench.report import task_table
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


def plan_table(plan: RunPlan) -> Table:
    """The parameters a person confirms before approving."""
    req = plan.request
    table = Table(title=f"Plan of run {req.run_id}", show_header=False)
    rows = [
        ("model", req.model),
        ("suite", req.suite),
        ("agent", req.agent),
        ("config mode", f"{req.config_mode} ({', '.join(plan.lanes)})"),
        ("parallel slots", str(req.parallel)),
        ("category", req.category),
        ("tasks", str(len(plan.tasks))),
        ("attempts", str(len(plan.tasks) * len(plan.lanes))),
        ("agent-hours (upper bound)", f"{plan.estimated_agent_hours:.2f}"),
        ("infra retries", f"{req.infra_retries} per arm, backoff from {req.infra_backoff_sec:g} s"),
        ("results", plan.results_dir),
    ]
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
    done = f"{p.done}/{p.total} pairs done{excluded}"
    return f"{p.phase}: {done}; attempts: {classes}; in flight: {running}"


def result_tables(result: RunResult) -> list[Table | str]:
    """Per task and lane (reward | exit class), per lane totals, then what went wrong."""
    tasks = Table(title=f"Run {result.plan.request.run_id}: reward | exit class")
    tasks.add_column("task")
    for lane in result.plan.lanes:
        tasks.add_column(lane)
    for row in task_table(result):
        tasks.add_row(*row)
    lanes = Table(title="Per lane")
    for col in ("lane", "attempts", "scored", "mean reward", "passed"):
        lanes.add_column(col)
    for s in result.lanes:
        mean = "-" if s.mean_reward is None else f"{s.mean_reward:.3f}"
        lanes.add_row(s.lane, str(s.attempts), str(s.scored), mean, str(s.passed))
    notes: list[Table | str] = [
        f"[yellow]excluded[/] {task}: {why}" for task, why in sorted(result.excluded.items())
    ]
    notes += [
        f"{a.task_id} / {a.lane} / attempt {a.attempt}: {a.exit_class}: {a.reason}"
        + (f" (verifier: {a.verifier_error})" if a.verifier_error else "")
        for a in result.attempts
        if a.exit_class != "completed" or a.verifier_error
    ]
    return [tasks, lanes, *notes]
