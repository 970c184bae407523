"""Run totals and the Markdown report, computed from attempt results alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from durabench.models.results import AttemptResult, LaneSummary, RunResult

__all__ = ["PASS_REWARD", "last_attempts", "render_markdown", "summarize_lanes", "task_table"]

PASS_REWARD = 1.0


def summarize_lanes(
    attempts: Iterable[AttemptResult], lanes: Iterable[str], excluded: Mapping[str, str]
) -> tuple[LaneSummary, ...]:
    """Totals per lane: infra attempts, missing rewards and excluded pairs are not scored."""
    attempts = list(attempts)
    out = []
    for lane in lanes:
        mine = [a for a in attempts if a.lane == lane]
        scored = [a.reward for a in mine if a.included and a.task_id not in excluded]
        out.append(
            LaneSummary(
                lane=lane,
                attempts=len(mine),
                scored=len(scored),
                mean_reward=sum(r for r in scored if r is not None) / len(scored)
                if scored
                else None,
                passed=sum(1 for r in scored if r is not None and r >= PASS_REWARD),
                by_class=dict(Counter(a.exit_class for a in mine)),
            )
        )
    return tuple(out)


def last_attempts(attempts: Iterable[AttemptResult]) -> dict[tuple[str, str], AttemptResult]:
    """The last attempt of each (task, lane)."""
    last: dict[tuple[str, str], AttemptResult] = {}
    for a in sorted(attempts, key=lambda a: a.attempt):
        last[(a.task_id, a.lane)] = a
    return last


def _cell(attempt: AttemptResult | None, excluded: bool) -> str:
    if attempt is None:
        return "- | not run"
    reward = "-" if attempt.reward is None or attempt.infra else f"{attempt.reward:.2f}"
    tries = f" (attempt {attempt.attempt})" if attempt.attempt > 1 else ""
    return f"{reward} | {attempt.exit_class}{tries}{' [excluded]' if excluded else ''}"


def task_table(result: RunResult) -> list[list[str]]:
    """Rows of task id, then ``reward | exit class`` per lane (the last attempt of each)."""
    last = last_attempts(result.attempts)
    return [
        [
            t.task_id,
            *(
                _cell(last.get((t.task_id, lane)), t.task_id in result.excluded)
                for lane in result.plan.lanes
            ),
        ]
        for t in result.plan.tasks
    ]


def _header(result: RunResult) -> list[str]:
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
    if result.plan.mcp_env_missing:
        lines.append(f"- **MCP lane ran without {', '.join(result.plan.mcp_env_missing)}**")
    return lines


def render_markdown(result: RunResult) -> str:
    """The run's ``report.md``."""
    lines = [*_header(result), "", "## Per task (reward | exit class)", ""]
    lines.append("| task | " + " | ".join(result.plan.lanes) + " |")
    lines.append("|---" * (1 + len(result.plan.lanes)) + "|")
    for row in task_table(result):
        lines.append("| " + " | ".join(c.replace(" | ", " / ") for c in row) + " |")
    lines += ["", "## Per lane", ""]
    lines.append("| lane | attempts | scored | mean reward | passed | exit classes |")
    lines.append("|---|---|---|---|---|---|")
    for s in result.lanes:
        mean = "-" if s.mean_reward is None else f"{s.mean_reward:.3f}"
        classes = ", ".join(f"{k}: {v}" for k, v in sorted(s.by_class.items()))
        lines.append(f"| {s.lane} | {s.attempts} | {s.scored} | {mean} | {s.passed} | {classes} |")
    if result.excluded:
        lines += ["", "## Excluded pairs", ""]
        lines += [f"- {task}: {why}" for task, why in sorted(result.excluded.items())]
    others = [a for a in result.attempts if a.exit_class != "completed" or a.verifier_error]
    if others:
        lines += ["", "## Attempts that did not complete", ""]
        for a in others:
            why = a.reason + (f"; verifier: {a.verifier_error}" if a.verifier_error else "")
            lines.append(f"- {a.task_id} / {a.lane} / attempt {a.attempt}: {a.exit_class}: {why}")
    return "\n".join(lines) + "\n"
