"""The viewer's pages of runs: the list of runs, a run (plan and scorecard), a pair.

A run is read from its directory as it stands: the report's ``results.json`` when the run
has ended, else the plan and the attempts finished so far, scored the same way.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from durabench.errors import ConfigError
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import Approval, RunPlan
from durabench.models.suite_run import RecordRunInput
from durabench.results.cost_report import cost_lines, cost_table
from durabench.results.files import build_results, load_results
from durabench.results.report import cell_text, comparison_lines, totals_table
from durabench.results.report_html import headline_html
from durabench.results.viewer.page import esc, href, page, table
from durabench.settings.paths import RunPaths

__all__ = ["index_page", "pair_page", "run_page", "run_result"]


def _approval(paths: RunPaths) -> Approval | None:
    try:
        return RecordRunInput.model_validate_json(paths.run.read_text()).approval
    except (OSError, ValidationError):
        return None


def run_result(paths: RunPaths) -> RunResult:
    """The run's results: the report's when it ended, else what is on disk so far.

    Raises:
        ConfigError: the directory holds no plan (no such run).
    """
    if paths.results.is_file():
        return load_results(paths)
    if not paths.plan.is_file():
        raise ConfigError(f"no run at {paths.root}: it has no plan.json")
    return build_results(paths, _approval(paths), 1.0)


def _state(paths: RunPaths) -> str:
    if paths.results.is_file():
        return "reported"
    return "approved, running or stopped" if paths.run.is_file() else "planned, not approved"


def index_page(runs_dir: Path) -> str:
    """Every run under ``runs_dir``, newest first."""
    rows = []
    plans = sorted(runs_dir.glob("*/plan.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for plan_file in plans:
        try:
            plan = RunPlan.model_validate_json(plan_file.read_text())
        except (OSError, ValidationError):
            continue
        req, paths = plan.request, RunPaths(root=plan_file.parent)
        run_id = plan_file.parent.name  # where it lies: a plan.json may name another run
        named = "" if req.run_id == run_id else f" (plan.json names run {esc(req.run_id)})"
        rows.append(
            [
                f'<a href="{href("runs", run_id)}">{esc(run_id)}</a>{named}',
                esc(req.suite),
                esc(req.agent.name),
                esc(req.agent.model),
                esc(", ".join(plan.lanes)),
                str(plan.task_count),
                esc(_state(paths)),
            ]
        )
    header = ["run", "suite", "agent", "model", "lanes", "tasks", "state"]
    body = [table("runs", header, rows)] if rows else [f"<p>No runs in {esc(runs_dir)} yet.</p>"]
    return page("durabench runs", [], body)


def _plan(result: RunResult) -> list[str]:
    plan, req = result.plan, result.plan.request
    facts = [
        ("suite", req.suite),
        ("agent", req.agent.name),
        ("model", req.agent.model),
        ("config mode", f"{req.config_mode} ({', '.join(plan.lanes)})"),
        ("category", req.category),
        ("tasks", str(plan.task_count)),
        ("parallel", str(plan.parallel)),
        ("estimated agent-hours", f"{plan.estimated_agent_hours:g}"),
        ("infra retries", str(req.infra_retries)),
    ]
    if result.approval is not None:
        when = result.approval.approved_at.isoformat() if result.approval.approved_at else "?"
        facts.append(("approved by", f"{result.approval.approver} at {when}"))
    else:
        facts.append(("approved by", "nobody yet"))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts)
    out = ["<h2>Plan</h2>", f'<dl id="plan">{items}</dl>']
    out += [f'<p class="warn">warning at plan time: {esc(w)}</p>' for w in plan.warnings]
    return out


def _scorecard(result: RunResult, run_id: str) -> list[str]:
    card = result.scorecard
    if card is None:
        return []
    cells = {(c.task_id, c.lane): c for c in card.cells}
    rows = [
        [f'<a href="{href("runs", run_id, "tasks", t.task_id)}">{esc(t.task_id)}</a>']
        + (
            ["excluded: " + esc(result.excluded[t.task_id])]
            if t.task_id in result.excluded
            else [""]
        )
        + [esc(cell_text(cells[(t.task_id, lane)])) for lane in result.plan.lanes]
        for t in result.plan.tasks
        if all((t.task_id, lane) in cells for lane in result.plan.lanes)
    ]
    header = ["task", "pair", *(f"{lane} (best | mean)" for lane in result.plan.lanes)]
    out = ["<h2>Scores</h2>", table("scores", header, rows)]
    if card.comparison is not None:
        lines = "".join(f"<li>{esc(line[2:])}</li>" for line in comparison_lines(card.comparison))
        out.append(f'<ul id="comparison">{lines}</ul>')
    if card.cost is not None:
        lines = "".join(
            f"<li>{esc(line[2:])}</li>" for line in cost_lines(card.cost, result.attempts)
        )
        out.append(f'<ul id="cost">{lines}</ul>')
        cost_header, costs = cost_table(card.cost)
        out += [table("cost-per-pair", cost_header, ([esc(c) for c in row] for row in costs))]
    totals_header, totals = totals_table(card)
    out += [table("totals", totals_header, ([esc(c) for c in row] for row in totals))]
    return out


def _attempt_rows(run_id: str, attempts: list[AttemptResult]) -> list[list[str]]:
    rows = []
    for a in sorted(attempts, key=lambda a: (a.task_id, a.lane, a.attempt)):
        link = href("runs", run_id, "tasks", a.task_id, a.lane, f"attempt-{a.attempt}")
        css = "infra" if a.infra else a.exit_class
        rows.append(
            [
                esc(a.task_id),
                esc(a.lane),
                f'<a href="{link}">attempt {a.attempt}</a>',
                f'<span class="class {esc(css)}">{esc(a.exit_class)}</span>',
                "-" if a.reward is None else f"{a.reward:g}",
                esc(a.reason),
            ]
        )
    return rows


def _attempts_table(run_id: str, attempts: list[AttemptResult]) -> str:
    header = ["task", "lane", "attempt", "exit class", "reward", "why"]
    return table("attempts", header, _attempt_rows(run_id, attempts))


def run_page(paths: RunPaths) -> str:
    """A run: its plan, the headline, its scores and every attempt.

    Raises:
        ConfigError: no such run.
    """
    result, run_id = run_result(paths), paths.root.name
    body = [headline_html(result), *_plan(result), *_scorecard(result, run_id)]
    body += ["<h2>Attempts</h2>", _attempts_table(run_id, list(result.attempts))]
    if paths.report_html.is_file():
        body.append(f'<p><a href="{href("runs", run_id)}report.html">report.html</a></p>')
    return page(f"run {run_id}", [(href("runs", run_id), run_id)], body)


def pair_page(paths: RunPaths, task_id: str) -> str:
    """One task's pair: each lane's attempts, and why the pair was excluded if it was.

    Raises:
        ConfigError: no such run, or the run has no such task.
    """
    result, run_id = run_result(paths), paths.root.name
    if task_id not in {t.task_id for t in result.plan.tasks}:
        raise ConfigError(f"run {run_id} has no task {task_id}")
    body = []
    if task_id in result.excluded:
        body.append(f'<p class="warn">pair excluded: {esc(result.excluded[task_id])}</p>')
    cells = (
        {c.lane: c for c in result.scorecard.cells if c.task_id == task_id}
        if result.scorecard
        else {}
    )
    rows = [[esc(lane), esc(cell_text(cells[lane]))] for lane in result.plan.lanes if lane in cells]
    body += ["<h2>Scores</h2>", table("pair", ["lane", "best | mean"], rows)]
    mine = [a for a in result.attempts if a.task_id == task_id]
    body += ["<h2>Attempts</h2>", _attempts_table(run_id, mine)]
    crumbs = [(href("runs", run_id), run_id), (href("runs", run_id, "tasks", task_id), task_id)]
    return page(f"task {task_id}", crumbs, body)
