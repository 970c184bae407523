"""Numbers read from a transcript: each one optional, finite and non-negative, or ignored.

A transcript is the agent's own text, and the agent has read this code: a usage field
can say ``"lots"``, ``-1000``, ``1e999`` or ``true``. Nothing it writes may raise (a parser
that raises fails the activity that reads it, retried for hours) or reach a total as a
negative or infinite number. A value that is not a plain count is read as no value: a
token count of 0, a cost of ``None`` (unreported), never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["MAX_COUNT", "count", "dollars"]

MAX_COUNT = 10**12
"""More tokens than any session can use (a trillion): a count past it is no count."""
_MAX_DOLLARS = 1e9


def count(fields: Mapping[str, object], name: str) -> int:
    """``fields[name]`` as a token count: a non-negative whole number, else 0.

    An integral float (``12.0``, as some JSON writers print) counts; a bool, a string, a
    fraction, a negative, a non-finite or an absurd number is ignored.
    """
    value = fields.get(name)
    if isinstance(value, bool):
        return 0
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_COUNT:
        return value
    return 0


def dollars(value: object) -> float | None:
    """``value`` as a cost in USD: finite and non-negative, else ``None`` (unreported)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    cost = float(value) if not isinstance(value, int) or abs(value) <= _MAX_DOLLARS else math.inf
    return cost if math.isfinite(cost) and 0.0 <= cost <= _MAX_DOLLARS else None
