"""Timeouts and retry policies, declared once for every workflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from durabench.errors import non_retryable_names

__all__ = ["HEARTBEAT", "REATTACH", "RETRY", "SHORT", "TEARDOWN_RETRY"]

RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=3,
    non_retryable_error_types=non_retryable_names(),
)
"""Transient failures (Docker hiccups, a lost worker) retry; the leaves of NON_RETRYABLE don't."""

REATTACH = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=5,
    non_retryable_error_types=non_retryable_names(),
)
"""The agent phase: a retry re-attaches to the session running in the container (it never
starts it twice). A container that is gone fails the phase; the pair starts a new attempt,
on the record."""

TEARDOWN_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=10,
)
"""Removing a container is idempotent and leaking one costs money: try hard."""

HEARTBEAT = timedelta(seconds=30)
"""Heartbeat timeout of long activities (they beat every 10 s)."""

SHORT = timedelta(seconds=60)
"""Start-to-close timeout of quick activities."""
