"""A small results set worked out by hand, shared by the report tests.

| task | baseline attempts                          | full attempts                                |
|------|--------------------------------------------|----------------------------------------------|
| t1   | completed 1.0                              | completed 1.0                                |
| t2   | model_timeout 0.0 (600 s)                  | completed 1.0                                |
| t3   | completed 1.0, model_agent_error 0.0       | infra_rate_limit, completed 0.0              |
| t4   | completed 1.0                              | infra_usage_cap ×2 (pair excluded)           |
| t5   | completed 1.0                              | completed, verifier gave no reward           |

Every attempt ran CLI 2.1.332 but t3's second full attempt, which ran 2.0.14 (a mixed pair).

Compared pairs: t1 (0), t2 (+1), t3 (0.0 - 0.5 = -0.5): mean +1/6. Pass at 1.0:
t1 both, t2 full only, t3 neither: b=0, c=1, McNemar p = 1.0. Dropped: t4 excluded,
t5 unscored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from durabench.models.agent import AgentSpec
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import Approval, RunPlan, RunRequest, TaskRef
from durabench.models.verdict import Signals, TokenUsage
from durabench.results.report import summarize_lanes
from durabench.results.scoring import compute_scorecard

LANES = ("baseline", "sourcegraph_full")
TASKS = ("t1", "t2", "t3", "t4", "t5")
TASK_IMAGE = "sha256:" + "1" * 64
AGENT_IMAGE = "sha256:" + "a" * 64
LEGACY_IMAGE = "sha256:" + "b" * 64


def attempt(
    task: str, lane: str, n: int, exit_class: str, reward: float | None, **kw: Any
) -> AttemptResult:
    defaults: dict[str, Any] = {
        "wall_seconds": 100.0,
        "tokens": TokenUsage(input=1000, output=100),
        "cost_usd": 0.5,
        "reason": f"{exit_class} reason",
        "cli_version": "2.1.332",
        "task_image_id": TASK_IMAGE,
        "agent_image_id": AGENT_IMAGE,
    }
    return AttemptResult(
        run_id="hand",
        task_id=task,
        lane=lane,
        attempt=n,
        exit_class=exit_class,  # type: ignore[arg-type]
        reward=reward,
        agent="replay",
        model="m",
        **{**defaults, **kw},
    )


ATTEMPTS = (
    attempt(
        "t1",
        "baseline",
        1,
        "completed",
        1.0,
        last_message="Done, all tests pass.",
        signals=Signals(claims_complete=True),
    ),
    attempt("t1", "sourcegraph_full", 1, "completed", 1.0),
    attempt("t2", "baseline", 1, "model_timeout", 0.0, wall_seconds=600.0),
    attempt("t2", "sourcegraph_full", 1, "completed", 1.0),
    attempt("t3", "baseline", 1, "completed", 1.0),
    attempt("t3", "baseline", 2, "model_agent_error", 0.0, wall_seconds=42.0),
    attempt("t3", "sourcegraph_full", 1, "infra_rate_limit", None, cost_usd=None),
    attempt(
        "t3",
        "sourcegraph_full",
        2,
        "completed",
        0.0,
        last_message="Fixed!",
        signals=Signals(claims_complete=True, false_completion=True),
        cli_version="2.0.14",
        agent_image_id=LEGACY_IMAGE,
    ),
    attempt("t4", "baseline", 1, "completed", 1.0),
    attempt("t4", "sourcegraph_full", 1, "infra_usage_cap", None),
    attempt("t4", "sourcegraph_full", 2, "infra_usage_cap", None),
    attempt("t5", "baseline", 1, "completed", 1.0),
    attempt(
        "t5",
        "sourcegraph_full",
        1,
        "completed",
        None,
        verifier_error="RewardFileMissing: no reward.txt",
    ),
)
EXCLUDED = {"t4": "sourcegraph_full ended infra_usage_cap on attempt 2"}


def hand_result() -> RunResult:
    plan = RunPlan(
        request=RunRequest(run_id="hand", suite="s", agent=AgentSpec(name="replay", model="m")),
        lanes=LANES,
        tasks=tuple(TaskRef(task_id=t, task_dir=f"/{t}") for t in TASKS),
        task_count=len(TASKS),
        estimated_agent_hours=1.0,
        results_dir="/tmp/hand",
    )
    return RunResult(
        plan=plan,
        approval=Approval(approver="ann", approved_at=datetime(2026, 1, 1, tzinfo=UTC)),
        attempts=ATTEMPTS,
        excluded=EXCLUDED,
        lanes=summarize_lanes(ATTEMPTS, LANES, EXCLUDED),
        scorecard=compute_scorecard(ATTEMPTS, TASKS, LANES, EXCLUDED),
    )
