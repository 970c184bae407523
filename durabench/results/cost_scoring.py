"""Cost as a result: what each lane cost per task, and the paired difference with its CI.

The pairs and attempts are the reward comparison's (an attempt that counts in a pair that
counts), resampled with the same bootstrap, so "the MCP lane scores +0.12 and costs
+$0.31 per task" speaks of the same tasks. An arm with an unpriced attempt leaves its pair
out of the cost difference (counted), never in at $0; tokens are always metered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from durabench.models.results import AttemptResult
from durabench.models.scorecard import CostComparison, PairedComparison, TaskCost
from durabench.results.stats import paired_bootstrap_ci

__all__ = ["cost_comparison"]


def _counted(attempts: Sequence[AttemptResult]) -> list[AttemptResult]:
    """The attempts a cell's reward is the mean of."""
    return [a for a in attempts if a.included and a.reward is not None]


def _mean_cost(attempts: Sequence[AttemptResult]) -> float | None:
    costs = [a.cost_usd for a in attempts]
    if not costs or any(c is None for c in costs):
        return None
    return sum(c for c in costs if c is not None) / len(costs)


def _mean_tokens(attempts: Sequence[AttemptResult]) -> float:
    return sum(a.tokens.total for a in attempts) / len(attempts) if attempts else 0.0


def _task_cost(
    task_id: str, base: Sequence[AttemptResult], full: Sequence[AttemptResult]
) -> TaskCost:
    base_usd, full_usd = _mean_cost(base), _mean_cost(full)
    base_tokens, full_tokens = _mean_tokens(base), _mean_tokens(full)
    return TaskCost(
        task_id=task_id,
        baseline_usd=base_usd,
        full_usd=full_usd,
        delta_usd=None if base_usd is None or full_usd is None else full_usd - base_usd,
        baseline_tokens=base_tokens,
        full_tokens=full_tokens,
        delta_tokens=full_tokens - base_tokens,
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def cost_comparison(
    attempts: Sequence[AttemptResult],
    by_cell: Mapping[tuple[str, str], Sequence[AttemptResult]] | None,
    reward: PairedComparison,
) -> CostComparison:
    """The cost and token difference over the pairs ``reward`` compares.

    ``by_cell``: ``attempts`` by task and lane, when the caller has them already.
    """
    if by_cell is None:
        cells: dict[tuple[str, str], list[AttemptResult]] = {}
        for a in attempts:
            cells.setdefault((a.task_id, a.lane), []).append(a)
        by_cell = cells
    base_lane, full_lane = reward.baseline_lane, reward.full_lane
    tasks = tuple(
        _task_cost(
            d.task_id,
            _counted(by_cell.get((d.task_id, base_lane), ())),
            _counted(by_cell.get((d.task_id, full_lane), ())),
        )
        for d in reward.tasks
    )
    priced = [t for t in tasks if t.delta_usd is not None]
    usd = [t.delta_usd for t in priced if t.delta_usd is not None]
    tokens = [t.delta_tokens for t in tasks]
    usd_ci = paired_bootstrap_ci(usd, resamples=reward.resamples, seed=reward.seed) if usd else None
    tok_ci = (
        paired_bootstrap_ci(tokens, resamples=reward.resamples, seed=reward.seed)
        if tokens
        else None
    )
    return CostComparison(
        baseline_lane=base_lane,
        full_lane=full_lane,
        tasks=tasks,
        priced_pairs=len(priced),
        unpriced_pairs=len(tasks) - len(priced),
        mean_baseline_usd=_mean([t.baseline_usd for t in priced if t.baseline_usd is not None]),
        mean_full_usd=_mean([t.full_usd for t in priced if t.full_usd is not None]),
        mean_delta_usd=_mean(usd),
        ci_low_usd=usd_ci.low if usd_ci else None,
        ci_high_usd=usd_ci.high if usd_ci else None,
        mean_delta_tokens=_mean(tokens),
        ci_low_tokens=tok_ci.low if tok_ci else None,
        ci_high_tokens=tok_ci.high if tok_ci else None,
        resamples=reward.resamples,
        seed=reward.seed,
    )
