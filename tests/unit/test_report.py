from datetime import UTC, datetime

from durabench.models import Approval, AttemptResult, RunPlan, RunRequest, RunResult, TaskRef
from durabench.report import render_markdown, summarize_lanes, task_table


def _attempt(
    task: str, lane: str, exit_class: str, reward: float | None, attempt: int = 1
) -> AttemptResult:
    return AttemptResult(
        run_id="r",
        task_id=task,
        lane=lane,
        attempt=attempt,
        exit_class=exit_class,  # type: ignore[arg-type]
        reward=reward,
        agent="oracle",
        model="none",
        reason="why" if exit_class != "completed" else "",
    )


def _result() -> RunResult:
    attempts = (
        _attempt("t1", "baseline", "completed", 1.0),
        _attempt("t1", "full", "completed", 0.5),
        _attempt("t2", "baseline", "infra_rate_limit", 0.0),
        _attempt("t2", "baseline", "model_agent_error", 0.0, attempt=2),
        _attempt("t2", "full", "model_no_code", 0.0),
        _attempt("t3", "baseline", "completed", 1.0),
        _attempt("t3", "full", "infra_usage_cap", None),
    )
    plan = RunPlan(
        request=RunRequest(run_id="r", suite="s"),
        lanes=("baseline", "full"),
        tasks=tuple(TaskRef(task_id=t, task_dir=f"/{t}") for t in ("t1", "t2", "t3")),
        estimated_agent_hours=1.0,
        results_dir="/tmp/r",
    )
    approval = Approval(approver="ann", approved_at=datetime(2026, 1, 1, tzinfo=UTC))
    excluded = {"t3": "full ended infra_usage_cap on attempt 1"}
    return RunResult(
        plan=plan,
        approval=approval,
        attempts=attempts,
        excluded=excluded,
        lanes=summarize_lanes(attempts, plan.lanes, excluded),
    )


def test_infra_attempts_and_excluded_pairs_are_not_scored() -> None:
    base, full = _result().lanes
    # baseline: t1 (1.0) and t2 attempt 2 (0.0); the infra attempt and excluded t3 are out.
    assert (base.attempts, base.scored, base.mean_reward, base.passed) == (4, 2, 0.5, 1)
    assert (full.scored, full.mean_reward, full.passed) == (2, 0.25, 0)
    assert base.by_class == {"completed": 2, "infra_rate_limit": 1, "model_agent_error": 1}


def test_table_and_markdown_show_last_attempts_exclusions_and_reasons() -> None:
    result = _result()
    assert task_table(result) == [
        ["t1", "1.00 | completed", "0.50 | completed"],
        ["t2", "0.00 | model_agent_error (attempt 2)", "0.00 | model_no_code"],
        ["t3", "1.00 | completed [excluded]", "- | infra_usage_cap [excluded]"],
    ]
    md = render_markdown(result)
    assert "| t2 | 0.00 / model_agent_error (attempt 2) | 0.00 / model_no_code |" in md
    assert "approved by ann" in md
    assert "## Excluded pairs\n\n- t3: full ended infra_usage_cap on attempt 1" in md
    assert "t2 / baseline / attempt 1: infra_rate_limit: why" in md
