"""Timeouts and retry policies, declared once for every workflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from durabench.errors import non_retryable_names

__all__ = [
    "AFTER_AGENT",
    "AFTER_AGENT_BOUND",
    "BUSY_POLL_MAX",
    "CLAIM_RETRY",
    "COOLING_POLL",
    "DEFAULT_COOLDOWN",
    "HEARTBEAT",
    "MAX_LOSSES",
    "MAX_MOVES",
    "POOL_RETRY",
    "REATTACH",
    "RETRY",
    "SHORT",
    "TEARDOWN_RETRY",
    "WATCH_RETRY",
]

RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=3,
    non_retryable_error_types=non_retryable_names(),
)
"""Transient failures (Docker hiccups, a lost worker) retry; the leaves of NON_RETRYABLE don't."""

AFTER_AGENT = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=5),
    maximum_attempts=0,
    non_retryable_error_types=[*non_retryable_names(), "ValidationError"],
)
"""Verifying, classifying and recording an attempt whose agent has run: giving up hands
the pair an ``infra_other`` to retry, i.e. a new paid session, so they retry by time, never
by a count: until :data:`AFTER_AGENT_BOUND` has passed beyond the step's own time limit
(schedule-to-close). A verdict or result that cannot be built (pydantic's
``ValidationError``) fails the same way every time: it is not retried, rather than hold the
host and the account for hours."""

AFTER_AGENT_BOUND = timedelta(hours=6)
"""How long past its own time limit a step on a session that began may keep retrying:
only an outage of hours gives up (schedule-to-close)."""

REATTACH = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=0,
    non_retryable_error_types=non_retryable_names(),
)
"""The agent phase: a retry re-attaches to the session running in the container (it never
starts it twice), so it retries by time, never by a count: a worker's takeover
(``WorkerLost``) or a Docker hiccup costs a retry each, and five of them must not end a
session that runs on. The phase's deadline is the session's time limit plus
:data:`AFTER_AGENT_BOUND`. A container that is gone (``SandboxGone``) or a session that died
unrecorded (``AgentLost``) fails the phase at once; the pair starts a new attempt, on the
record."""

CLAIM_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=15),
    maximum_attempts=0,
    non_retryable_error_types=non_retryable_names(),
)
"""Claiming a host: a full host refuses, and the retry goes to whichever worker polls
next, so the attempt lands on a host with room, or waits until one has some."""

MAX_MOVES = 3
"""Times an attempt may start over on another host before a lost host ends it
``infra_other`` (the pair may retry it)."""

MAX_LOSSES = 10
"""Times an attempt may find its host gone at all, counting hosts that came back (the
attempt carries on there for free): a host whose container worker keeps failing while
it still claims attempts must not hold one forever."""

TEARDOWN_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=10,
)
"""Removing a container is idempotent and leaking one costs money: try hard."""

WATCH_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(minutes=1),
    maximum_attempts=0,
    non_retryable_error_types=non_retryable_names(),
)
"""Waiting on the server for pairs to close, and writing the run's report: a wait that gave
up would leave its pair's slot held and the report unwritten, so an outage of the server
or the object store is waited out; a failure no retry fixes fails the run, saying why."""

HEARTBEAT = timedelta(seconds=30)
"""Heartbeat timeout of long activities (they beat every 10 s)."""

SHORT = timedelta(seconds=60)
"""Start-to-close timeout of quick activities."""

POOL_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=30),
    maximum_attempts=0,
    non_retryable_error_types=non_retryable_names(),
)
"""Talking to the account pool: a pool that is not running yet is waited for (a sync
starts it); an agent with no account is not retried."""

COOLING_POLL = timedelta(minutes=15)
"""While every account cools after a usage cap, how often a waiting arm asks the pool
anyway (a sync may have added an account)."""

DEFAULT_COOLDOWN = timedelta(hours=1)
"""Cooldown of a capped account whose attempt's result names no reset time: workers name
one (DURABENCH_USAGE_CAP_COOLDOWN_SEC when the API did not), and a result without it must
still cool the account rather than send the retry straight back to the cap."""

BUSY_POLL_MAX = timedelta(minutes=4)
"""The longest wait between asks of an arm whose agent's every slot is in use: about
15 asks an hour, so a pair that waits a day for a slot keeps a few thousand events."""
