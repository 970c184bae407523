"""From attempts to the published numbers: Best/Mean, exclusions, paired statistics, totals.

An attempt counts when its class is ``completed`` or ``model_*`` and its tests ran (it has
a reward). A pair enters the comparison only when neither arm was excluded and both arms
have an attempt that counts, so an infra failure never becomes a discordant pair. A pair
with no attempt in either arm was never started (a spend cap left it): it is counted as
not run, apart from the pairs that ran and produced no score.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from durabench.agents import agent_class
from durabench.errors import UnknownAgent
from durabench.models.results import AttemptResult
from durabench.models.scorecard import (
    Cell,
    ExcludedAttempt,
    PairedComparison,
    Scorecard,
    TaskDelta,
    Totals,
)
from durabench.results.cost_scoring import cost_comparison
from durabench.results.stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    mcnemar_exact,
    paired_bootstrap_ci,
)

__all__ = ["DEFAULT_PASS_THRESHOLD", "compute_scorecard"]

DEFAULT_PASS_THRESHOLD = 1.0


def _cell(task_id: str, lane: str, attempts: Sequence[AttemptResult]) -> Cell:
    counted = sorted((a for a in attempts if a.included), key=lambda a: a.attempt)
    rewards = [a.reward for a in counted if a.reward is not None]
    if not rewards:
        return Cell(
            task_id=task_id,
            lane=lane,
            best=None,
            mean=None,
            included=0,
            missing_reason=_why_missing(attempts),
        )
    daggers = tuple(
        f"attempt {a.attempt}: {a.exit_class} after {a.wall_seconds:.0f} s"
        for a in counted
        if a.exit_class != "completed"
    )
    return Cell(
        task_id=task_id,
        lane=lane,
        best=max(rewards),
        mean=sum(rewards) / len(rewards),
        included=len(rewards),
        daggers=daggers,
    )


def _why_missing(attempts: Sequence[AttemptResult]) -> str:
    if not attempts:
        return "not run"
    last = max(attempts, key=lambda a: a.attempt)
    if last.infra:
        return f"{len(attempts)} attempt(s), last {last.exit_class}"
    return f"no reward: {last.verifier_error or last.reason}"


def _excluded_attempts(attempts: Iterable[AttemptResult]) -> tuple[ExcludedAttempt, ...]:
    return tuple(
        ExcludedAttempt(
            task_id=a.task_id,
            lane=a.lane,
            attempt=a.attempt,
            exit_class=a.exit_class,
            reason=a.reason if a.infra else f"no reward: {a.verifier_error or a.reason}",
        )
        for a in sorted(attempts, key=lambda a: (a.task_id, a.lane, a.attempt))
        if not a.included
    )


def _comparison(
    cells: Mapping[tuple[str, str], Cell],
    task_ids: Sequence[str],
    lanes: tuple[str, str],
    excluded: Mapping[str, str],
    threshold: float,
    attempted: Collection[str],
) -> PairedComparison:
    base_lane, full_lane = lanes
    deltas: list[TaskDelta] = []
    dropped_excluded = dropped_unscored = dropped_not_run = 0
    for task_id in task_ids:
        base, full = cells[(task_id, base_lane)], cells[(task_id, full_lane)]
        if task_id in excluded:
            dropped_excluded += 1
        elif task_id not in attempted:
            dropped_not_run += 1
        elif base.mean is None or full.mean is None:
            dropped_unscored += 1
        else:
            deltas.append(
                TaskDelta(
                    task_id=task_id, baseline=base.mean, full=full.mean, delta=full.mean - base.mean
                )
            )
    passes = [(d.baseline >= threshold, d.full >= threshold) for d in deltas]
    b = sum(1 for base, full in passes if base and not full)
    c = sum(1 for base, full in passes if full and not base)
    ci = paired_bootstrap_ci([d.delta for d in deltas]) if deltas else None
    return PairedComparison(
        baseline_lane=base_lane,
        full_lane=full_lane,
        pass_threshold=threshold,
        tasks=tuple(deltas),
        mean_delta=sum(d.delta for d in deltas) / len(deltas) if deltas else None,
        ci_low=ci.low if ci else None,
        ci_high=ci.high if ci else None,
        resamples=BOOTSTRAP_RESAMPLES,
        seed=BOOTSTRAP_SEED,
        both_pass=sum(1 for p in passes if all(p)),
        both_fail=sum(1 for p in passes if not any(p)),
        baseline_only=b,
        full_only=c,
        mcnemar_p=mcnemar_exact(b, c),
        dropped_excluded=dropped_excluded,
        dropped_unscored=dropped_unscored,
        dropped_not_run=dropped_not_run,
    )


def _totals(lane: str, attempts: Sequence[AttemptResult]) -> Totals:
    return Totals(
        lane=lane,
        attempts=len(attempts),
        input_tokens=sum(a.tokens.input for a in attempts),
        output_tokens=sum(a.tokens.output for a in attempts),
        cache_read_tokens=sum(a.tokens.cache_read for a in attempts),
        cache_write_tokens=sum(a.tokens.cache_write for a in attempts),
        cost_usd=sum(a.cost_usd or 0.0 for a in attempts),
        cost_unreported=sum(
            1 for a in attempts if a.cost_usd is None and not a.unpriced_model and _calls_a_model(a)
        ),
        cost_unpriced=sum(1 for a in attempts if a.cost_usd is None and a.unpriced_model),
        no_model=sum(1 for a in attempts if not _calls_a_model(a)),
    )


def _calls_a_model(a: AttemptResult) -> bool:
    """Whether ``a``'s agent calls a model.

    One without a model API that reported no cost and no tokens (the oracle, nop) did not;
    an agent whose name is no longer known is taken to have.
    """
    if a.cost_usd is not None or a.tokens.input or a.tokens.output:
        return True
    try:
        return agent_class(a.agent).model_api is not None
    except UnknownAgent:
        return True


def compute_scorecard(
    attempts: Sequence[AttemptResult],
    task_ids: Sequence[str],
    lanes: Sequence[str],
    excluded: Mapping[str, str],
    threshold: float = DEFAULT_PASS_THRESHOLD,
) -> Scorecard:
    """The scorecard of a run: lanes in plan order, baseline first."""
    by_cell: dict[tuple[str, str], list[AttemptResult]] = {}
    for a in attempts:
        by_cell.setdefault((a.task_id, a.lane), []).append(a)
    cells = {
        (t, lane): _cell(t, lane, by_cell.get((t, lane), [])) for t in task_ids for lane in lanes
    }
    comparison = (
        _comparison(
            cells,
            task_ids,
            (lanes[0], lanes[1]),
            excluded,
            threshold,
            attempted={a.task_id for a in attempts},
        )
        if len(lanes) == 2
        else None
    )
    totals = [_totals(lane, [a for a in attempts if a.lane == lane]) for lane in lanes]
    return Scorecard(
        cells=tuple(cells.values()),
        excluded_attempts=_excluded_attempts(attempts),
        comparison=comparison,
        totals=(*totals, _totals("all", list(attempts))),
        cost=cost_comparison(attempts, by_cell, comparison) if comparison else None,
    )
