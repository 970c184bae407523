"""Timeouts and retry policies, declared once for every workflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from durabench.errors import non_retryable_names

__all__ = ["HEARTBEAT", "RETRY", "SHORT"]

RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=3,
    non_retryable_error_types=non_retryable_names(),
)
"""Transient failures (Docker hiccups, a lost worker) retry; the leaves of NON_RETRYABLE don't."""

HEARTBEAT = timedelta(seconds=30)
"""Heartbeat timeout of long activities (they beat every 10 s)."""

SHORT = timedelta(seconds=60)
"""Start-to-close timeout of quick activities."""
