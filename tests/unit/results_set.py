"""A small results set worked out by hand, shared by the report tests.

| task | baseline attempts                          | full attempts                                |
|------|--------------------------------------------|----------------------------------------------|
| t1   | completed 1.0                              | completed 1.0                                |
| t2   | model_timeout 0.0 (600 s)                  | completed 1.0                                |
| t3   | completed 1.0, model_agent_error 0.0       | infra_rate_limit, completed 0.0              |
| t4   | completed 1.0                              | infra_usage_cap ×2 (pair excluded)           |
| t5   | completed 1.0                              | completed, verifier gave no reward           |

Every attempt ran CLI 2.1.332 but t3's second full attempt, which ran 2.0.14 (a mixed pair).

Every attempt costs $0.50 and uses 1,000 input and 100 output tokens, but t3's infra
attempt, which reported no cost.

The numbers below are worked out here, by hand, and written out as literals: ``hand_result``
stores them, so a test that reads them back, or an audit that rebuilds them from the
attempts, compares the code with this page and not with itself.

Cells (Best | Mean over the attempts that count: not infra, with a reward):

- t3 baseline: 1.0 and 0.0, Best 1.0, Mean 0.5, a † for attempt 2 (model_agent_error, 42 s).
- t3 full: the infra attempt does not count, so Best = Mean = 0.0 over 1 attempt (not 0.0 / 2).
- t2 baseline: 0.0 with a † (model_timeout, 600 s); t4 full and t5 full have no Mean.

Compared pairs: t1 (0), t2 (+1), t3 (0.0 - 0.5 = -0.5): mean +0.5 / 3 = +1/6. The bootstrap
over 3 deltas: a resample of all -0.5 (or all +1) has probability 1/27 > 2.5%, so the 95%
interval is [-0.5, +1.0]. Pass at 1.0: t1 both, t2 full only, t3 neither: b=0, c=1,
McNemar p = min(1, 2 * 1/2) = 1.0. Dropped: t4 excluded, t5 unscored.

Lanes (excluded pair t4 left out; pass = reward 1.0):

- baseline: 6 attempts; scored t1 1.0, t2 0.0, t3 1.0 and 0.0, t5 1.0: 5 scored, mean
  3/5 = 0.6, 3 passed (with t4's 1.0 it would be 6, 4/6 = 0.667, 4).
- full: 7 attempts; scored t1 1.0, t2 1.0, t3 0.0: 3 scored, mean 2/3, 2 passed.

Cost (the compared pairs t1, t2, t3; each attempt that counts costs $0.50 and 1,100
tokens, t3 baseline's two as well): $0.50 a task in each lane, every difference $0 and 0
tokens, so both means and both intervals are 0.

Totals: baseline 6 attempts, 6,000 / 600 tokens, 6 x $0.50 = $3.00, none unreported;
full 7 attempts, 7,000 / 700, 6 x $0.50 = $3.00, 1 unreported; all 13, 13,000 / 1,300,
$6.00, 1 unreported.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from durabench.models.agent import AgentSpec
from durabench.models.results import AttemptResult, LaneSummary, RunResult
from durabench.models.run import Approval, RunPlan, RunRequest, TaskRef
from durabench.models.scorecard import (
    Cell,
    CostComparison,
    ExcludedAttempt,
    PairedComparison,
    Scorecard,
    TaskCost,
    TaskDelta,
    Totals,
)
from durabench.models.verdict import Signals, TokenUsage

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
EXCLUDED = {"t4": "sourcegraph_full ended infra_usage_cap on attempt 2: infra_usage_cap reason"}

BASE, FULL = LANES
LANE_SUMMARIES = (
    LaneSummary(
        lane=BASE,
        attempts=6,
        scored=5,
        mean_reward=0.6,
        passed=3,
        by_class={"completed": 4, "model_timeout": 1, "model_agent_error": 1},
    ),
    LaneSummary(
        lane=FULL,
        attempts=7,
        scored=3,
        mean_reward=2 / 3,
        passed=2,
        by_class={"completed": 4, "infra_rate_limit": 1, "infra_usage_cap": 2},
    ),
)
"""Each lane's totals, worked out in the module docstring."""

SCORECARD = Scorecard(
    cells=(
        Cell(task_id="t1", lane=BASE, best=1.0, mean=1.0, included=1),
        Cell(task_id="t1", lane=FULL, best=1.0, mean=1.0, included=1),
        Cell(
            task_id="t2",
            lane=BASE,
            best=0.0,
            mean=0.0,
            included=1,
            daggers=("attempt 1: model_timeout after 600 s",),
        ),
        Cell(task_id="t2", lane=FULL, best=1.0, mean=1.0, included=1),
        Cell(
            task_id="t3",
            lane=BASE,
            best=1.0,
            mean=0.5,
            included=2,
            daggers=("attempt 2: model_agent_error after 42 s",),
        ),
        Cell(task_id="t3", lane=FULL, best=0.0, mean=0.0, included=1),
        Cell(task_id="t4", lane=BASE, best=1.0, mean=1.0, included=1),
        Cell(
            task_id="t4",
            lane=FULL,
            best=None,
            mean=None,
            included=0,
            missing_reason="2 attempt(s), last infra_usage_cap",
        ),
        Cell(task_id="t5", lane=BASE, best=1.0, mean=1.0, included=1),
        Cell(
            task_id="t5",
            lane=FULL,
            best=None,
            mean=None,
            included=0,
            missing_reason="no reward: RewardFileMissing: no reward.txt",
        ),
    ),
    excluded_attempts=(
        ExcludedAttempt(
            task_id="t3",
            lane=FULL,
            attempt=1,
            exit_class="infra_rate_limit",
            reason="infra_rate_limit reason",
        ),
        ExcludedAttempt(
            task_id="t4",
            lane=FULL,
            attempt=1,
            exit_class="infra_usage_cap",
            reason="infra_usage_cap reason",
        ),
        ExcludedAttempt(
            task_id="t4",
            lane=FULL,
            attempt=2,
            exit_class="infra_usage_cap",
            reason="infra_usage_cap reason",
        ),
        ExcludedAttempt(
            task_id="t5",
            lane=FULL,
            attempt=1,
            exit_class="completed",
            reason="no reward: RewardFileMissing: no reward.txt",
        ),
    ),
    comparison=PairedComparison(
        baseline_lane=BASE,
        full_lane=FULL,
        pass_threshold=1.0,
        tasks=(
            TaskDelta(task_id="t1", baseline=1.0, full=1.0, delta=0.0),
            TaskDelta(task_id="t2", baseline=0.0, full=1.0, delta=1.0),
            TaskDelta(task_id="t3", baseline=0.5, full=0.0, delta=-0.5),
        ),
        mean_delta=1 / 6,
        ci_low=-0.5,
        ci_high=1.0,
        resamples=10_000,
        seed=20_251_125,
        both_pass=1,
        both_fail=1,
        baseline_only=0,
        full_only=1,
        mcnemar_p=1.0,
        dropped_excluded=1,
        dropped_unscored=1,
    ),
    totals=(
        Totals(
            lane=BASE,
            attempts=6,
            input_tokens=6_000,
            output_tokens=600,
            cache_read_tokens=0,
            cost_usd=3.0,
            cost_unreported=0,
        ),
        Totals(
            lane=FULL,
            attempts=7,
            input_tokens=7_000,
            output_tokens=700,
            cache_read_tokens=0,
            cost_usd=3.0,
            cost_unreported=1,
        ),
        Totals(
            lane="all",
            attempts=13,
            input_tokens=13_000,
            output_tokens=1_300,
            cache_read_tokens=0,
            cost_usd=6.0,
            cost_unreported=1,
        ),
    ),
    cost=CostComparison(
        baseline_lane=BASE,
        full_lane=FULL,
        tasks=tuple(
            TaskCost(
                task_id=t,
                baseline_usd=0.5,
                full_usd=0.5,
                delta_usd=0.0,
                baseline_tokens=1_100.0,
                full_tokens=1_100.0,
                delta_tokens=0.0,
            )
            for t in ("t1", "t2", "t3")
        ),
        priced_pairs=3,
        unpriced_pairs=0,
        mean_baseline_usd=0.5,
        mean_full_usd=0.5,
        mean_delta_usd=0.0,
        ci_low_usd=0.0,
        ci_high_usd=0.0,
        mean_delta_tokens=0.0,
        ci_low_tokens=0.0,
        ci_high_tokens=0.0,
        resamples=10_000,
        seed=20_251_125,
    ),
)
"""The scorecard, cell by cell, worked out in the module docstring."""


def hand_result() -> RunResult:
    """The hand-worked run: its attempts, with the lanes and scorecard stated above."""
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
        lanes=LANE_SUMMARIES,
        scorecard=SCORECARD,
    )
