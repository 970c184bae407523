"""Paired statistics for MCP-vs-baseline comparisons: bootstrap CI and McNemar's exact test.

Plain Python on purpose: the inputs are a few hundred numbers, and the exact algorithms
below are what the report promises (fixed seed, percentile bounds, two-sided exact p).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "Interval",
    "mcnemar_exact",
    "paired_bootstrap_ci",
]

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_251_125
"""Fixed, and reported with every interval, so anyone can reproduce it."""


class Interval(NamedTuple):
    """A two-sided confidence interval."""

    low: float
    high: float


def paired_bootstrap_ci(
    deltas: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
) -> Interval:
    """Percentile bootstrap CI of the mean of per-task paired differences.

    Tasks are resampled with replacement ``resamples`` times with ``random.Random(seed)``;
    the bounds are the ``(1-confidence)/2`` and ``(1+confidence)/2`` order statistics
    (nearest rank) of the resampled means. The ranks are worked out in exact fractions of
    the confidence as written: in floats, ``(1 - 0.95) / 2 * 10_000`` is just over 250, and
    the lower bound would be the 251st mean instead of the 250th.

    Raises:
        ValueError: ``deltas`` is empty.
    """
    n = len(deltas)
    if n == 0:
        raise ValueError("no paired differences to resample")
    rng = random.Random(seed)
    means = sorted(sum(deltas[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    alpha = (1 - Fraction(str(confidence))) / 2
    low = means[max(0, math.ceil(alpha * resamples) - 1)]
    high = means[min(resamples - 1, math.ceil((1.0 - alpha) * resamples) - 1)]
    return Interval(low, high)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs.

    Under the null each discordant pair goes either way with probability 1/2, so
    ``p = min(1, 2 * P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``.
    """
    n = b + c
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2.0 * tail)
