from datetime import UTC, datetime

from durabench.models import Approval, AttemptResult, RunPlan, RunRequest, RunResult, TaskRef
from durabench.report import render_markdown, summarize_lanes, task_table


def _attempt(task: str, lane: str, status: str, reward: float | None) -> AttemptResult:
    return AttemptResult(
        run_id="r",
        task_id=task,
        lane=lane,
        attempt=1,
        status=status,  # type: ignore[arg-type]
        reward=reward,
        agent="oracle",
        model="none",
        reason="why" if status != "completed" else "",
    )


def _result() -> RunResult:
    attempts = (
        _attempt("t1", "baseline", "completed", 1.0),
        _attempt("t1", "full", "completed", 0.5),
        _attempt("t2", "baseline", "infra_error", None),
        _attempt("t2", "full", "agent_error", 0.0),
    )
    plan = RunPlan(
        request=RunRequest(run_id="r", suite="s"),
        lanes=("baseline", "full"),
        tasks=(TaskRef(task_id="t1", task_dir="/x"), TaskRef(task_id="t2", task_dir="/y")),
        estimated_agent_hours=1.0,
        results_dir="/tmp/r",
    )
    approval = Approval(approver="ann", approved_at=datetime(2026, 1, 1, tzinfo=UTC))
    return RunResult(
        plan=plan,
        approval=approval,
        attempts=attempts,
        lanes=summarize_lanes(attempts, plan.lanes),
    )


def test_infra_errors_are_not_scored() -> None:
    base, full = _result().lanes
    assert (base.attempts, base.scored, base.mean_reward, base.passed) == (2, 1, 1.0, 1)
    assert (full.scored, full.mean_reward, full.passed) == (2, 0.25, 0)
    assert base.by_status == {"completed": 1, "infra_error": 1}


def test_table_and_markdown_show_each_task_and_lane() -> None:
    result = _result()
    assert task_table(result) == [
        ["t1", "1.00 | completed", "0.50 | completed"],
        ["t2", "- | infra_error", "0.00 | agent_error"],
    ]
    md = render_markdown(result)
    assert "| t2 | - / infra_error | 0.00 / agent_error |" in md
    assert "approved by ann" in md
    assert "t2 / baseline / attempt 1: infra_error: why" in md
