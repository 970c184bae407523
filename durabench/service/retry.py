"""When a failed service call is tried again, and after how long.

The client retries inside one activity attempt for short waits (a busy grader, a restarting
service); longer waits, and failures that outlast the budget, are left to Temporal's retry
policy, so a worker never sleeps for an hour holding a slot.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime

from durabench.models.benchmark_service import ServiceRetry

__all__ = ["ServiceRetry", "backoff_s", "parse_retry_after", "retryable_status"]

_RETRYABLE_4XX = frozenset({408, 409, 429})
"""Client errors that mean "not now" rather than "never": timeout, busy grading, quota."""


def retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth another try: 408, 409, 429 and every 5xx but 501."""
    return status in _RETRYABLE_4XX or (status >= 500 and status != 501)


def backoff_s(policy: ServiceRetry, failures: int) -> float:
    """Exponential backoff after ``failures`` failures, with jitter so workers spread out."""
    ceiling = min(policy.backoff_max_s, policy.backoff_s * 2.0 ** max(failures - 1, 0))
    return ceiling * random.uniform(0.5, 1.0)


def parse_retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP-date), if it says.

    A date in the past means "now" (0); a header that is neither form is ignored.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when.timestamp() - now(), 0.0)
