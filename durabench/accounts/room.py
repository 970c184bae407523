"""Whether an account has room for one more session of a model: what the API says is left.

The gateways read every answer's rate-limit headers (:mod:`durabench.gateway.room`); the
account pool keeps the newest reading of each account and model from every host, and
this decides, before a slot is leased, whether a new session may start on it:

* the API answered 429 and said to wait: no new session until then;
* less than :data:`LOW` of a limit is left (projected forward by its refill, as the
  API's reset time says): none, until it recovers;
* a session started and the API has not answered since: none yet (at most one new
  session for each answer, so a run never starts a crowd on one reading);
* below :data:`HIGH`, a start waits ``settle`` for the sessions already started to show
  in what is left, and none starts while it is falling;
* otherwise, one may start.

So the run starts fewer sessions as ``remaining`` falls and more as it recovers; a
session already running is never stopped for it (its CLI's own retry answers a 429).
Without any reading (nothing has run on the account yet) the account's slots are the
bound, as the plan's first guess. Pure: the pool passes ``now``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from durabench.models.room import Bucket, RoomReading, RoomState

__all__ = ["HIGH", "LOW", "NO_NEWS", "Closed", "closed", "left", "merged", "started"]

LOW = 0.25
"""Below this share of a limit left, no session starts."""
HIGH = 0.8
"""At or above this share left, a session starts on each fresh answer."""
FALLING = 0.02
"""A drop of more than this share of a limit between two readings is a fall."""
NO_NEWS = timedelta(seconds=60)
"""A start the API has not answered for this long does not hold the next one back."""
WINDOW = timedelta(minutes=1)
"""The window every provider here states its limits for."""


class Closed(NamedTuple):
    """Why no new session may start on an account and model now."""

    why: str
    until: datetime | None = None
    """When the API said it has room again, if it said."""


def left(reading: RoomReading, now: datetime) -> float:
    """The least share of any limit left at ``now``: its refill projected from the reading.

    A bucket refills evenly until its reset time (when none is stated: at its limit a
    minute, as a token bucket does); 1.0 when the answer stated no limit.
    """
    shares = [_projected(b, reading.observed_at, now) for b in reading.buckets()]
    return min(shares, default=1.0)


def _projected(bucket: Bucket, seen: datetime, now: datetime) -> float:
    missing = bucket.limit - bucket.remaining
    reset = bucket.reset_at or seen + WINDOW * (missing / bucket.limit)
    span = (reset - seen).total_seconds()
    refilled = 1.0 if span <= 0 else min(1.0, max(0.0, (now - seen).total_seconds() / span))
    return (bucket.remaining + missing * refilled) / bucket.limit


def closed(state: RoomState | None, now: datetime, settle: timedelta) -> Closed | None:
    """Why a new session may not start on ``state``'s account and model; ``None``: it may."""
    if state is None:
        return None
    latest, start = state.latest, state.last_start
    name = f"{state.account} ({state.model})"
    if start is not None and (latest is None or latest.observed_at <= start):
        if now - start < NO_NEWS:
            return Closed(f"{name}: waiting for the API's answer to the last session started")
        return None
    if latest is None:
        return None
    if latest.full_until is not None and latest.full_until > now:
        return Closed(
            f"{name}: the API answered 429 (rate limit); no new session before "
            f"{latest.full_until:%H:%M:%S} UTC",
            latest.full_until,
        )
    share = left(latest, now)
    if share < LOW:
        return Closed(f"{name}: the API says {share:.0%} of its rate limit is left")
    if share >= HIGH or start is None or state.since_start is None:
        return None
    base = state.since_start
    if latest.observed_at - base.observed_at < settle:
        return Closed(f"{name}: {share:.0%} of its rate limit left; the last start settles")
    if left(latest, latest.observed_at) < left(base, base.observed_at) - FALLING:
        return Closed(f"{name}: {share:.0%} of its rate limit left, and falling")
    return None


def merged(rooms: Iterable[RoomState], readings: Iterable[RoomReading]) -> tuple[RoomState, ...]:
    """``rooms`` with ``readings`` taken in: the newest per account and model wins."""
    by_key = {(r.account, r.model): r for r in rooms}
    for reading in sorted(readings, key=lambda r: r.observed_at):
        key = reading.key()
        state = by_key.get(key) or RoomState(account=key[0], model=key[1])
        update: dict[str, RoomReading] = {}
        if state.latest is None or reading.observed_at > state.latest.observed_at:
            update["latest"] = reading
        after_start = state.last_start is None or reading.observed_at > state.last_start
        if state.since_start is None and after_start:
            update["since_start"] = reading
        by_key[key] = state.model_copy(update=update)
    return tuple(by_key[k] for k in sorted(by_key))


def started(
    rooms: Iterable[RoomState], account: str, model: str, now: datetime
) -> tuple[RoomState, ...]:
    """``rooms`` after a session of ``model`` started on ``account`` at ``now``."""
    by_key = {(r.account, r.model): r for r in rooms}
    state = by_key.get((account, model)) or RoomState(account=account, model=model)
    by_key[(account, model)] = state.model_copy(update={"last_start": now, "since_start": None})
    return tuple(by_key[k] for k in sorted(by_key))
