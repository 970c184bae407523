"""Run totals and the Markdown report, computed from attempt results alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from durabench.models.results import AttemptResult, LaneSummary, RunResult

__all__ = ["render_markdown", "summarize_lanes", "task_table"]

PASS_REWARD = 1.0


def summarize_lanes(
    attempts: Iterable[AttemptResult], lanes: Iterable[str]
) -> tuple[LaneSummary, ...]:
    """Totals per lane; infra errors and missing rewards are not scored."""
    attempts = list(attempts)
    out = []
    for lane in lanes:
        mine = [a for a in attempts if a.lane == lane]
        scored = [a.reward for a in mine if a.reward is not None and a.status != "infra_error"]
        out.append(
            LaneSummary(
                lane=lane,
                attempts=len(mine),
                scored=len(scored),
                mean_reward=sum(scored) / len(scored) if scored else None,
                passed=sum(1 for r in scored if r >= PASS_REWARD),
                by_status=dict(Counter(a.status for a in mine)),
            )
        )
    return tuple(out)


def _cell(attempt: AttemptResult | None) -> str:
    if attempt is None:
        return "- | not run"
    reward = "-" if attempt.reward is None else f"{attempt.reward:.2f}"
    return f"{reward} | {attempt.status}"


def task_table(result: RunResult) -> list[list[str]]:
    """Rows of task id, then ``reward | status`` per lane (the last attempt of each)."""
    last: dict[tuple[str, str], AttemptResult] = {}
    for a in sorted(result.attempts, key=lambda a: a.attempt):
        last[(a.task_id, a.lane)] = a
    return [
        [t.task_id, *(_cell(last.get((t.task_id, lane))) for lane in result.plan.lanes)]
        for t in result.plan.tasks
    ]


def render_markdown(result: RunResult) -> str:
    """The run's ``report.md``."""
    req = result.plan.request
    lines = [
        f"# durabench run {req.run_id}",
        "",
        f"- suite: `{req.suite}`; agent: `{req.agent}`; model: `{req.model}`",
        f"- config mode: {req.config_mode} ({', '.join(result.plan.lanes)}); "
        f"category: {req.category}; parallel: {req.parallel}",
    ]
    if result.approval is not None:
        when = result.approval.approved_at.isoformat() if result.approval.approved_at else "?"
        lines.append(f"- approved by {result.approval.approver} at {when}")
    lines += ["", "## Per task (reward | status)", ""]
    lines.append("| task | " + " | ".join(result.plan.lanes) + " |")
    lines.append("|---" * (1 + len(result.plan.lanes)) + "|")
    for row in task_table(result):
        lines.append("| " + " | ".join(c.replace(" | ", " / ") for c in row) + " |")
    lines += [
        "",
        "## Per lane",
        "",
        "| lane | attempts | scored | mean reward | passed | statuses |",
    ]
    lines.append("|---|---|---|---|---|---|")
    for s in result.lanes:
        mean = "-" if s.mean_reward is None else f"{s.mean_reward:.3f}"
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(s.by_status.items()))
        lines.append(f"| {s.lane} | {s.attempts} | {s.scored} | {mean} | {s.passed} | {statuses} |")
    failed = [a for a in result.attempts if a.status != "completed"]
    if failed:
        lines += ["", "## Attempts that did not complete", ""]
        for a in failed:
            lines.append(f"- {a.task_id} / {a.lane} / attempt {a.attempt}: {a.status}: {a.reason}")
    return "\n".join(lines) + "\n"
