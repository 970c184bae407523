"""Whether an account has room for one more session of a model: what the API says is left.

The gateways read every answer's rate-limit headers (:mod:`durabench.gateway.room`); the
account pool keeps the newest reading of each account and model from every host, and
this decides, before a slot is leased, whether a new session may start on it:

* the API answered 429 and said to wait: no new session until then;
* less than :data:`LOW` of a limit is left (projected forward by its refill, as the
  API's reset time says): none, until it recovers;
* :data:`UNANSWERED` sessions started and the API has not answered since: none yet
  (a run never starts a crowd on one reading, nor before the API's first answer);
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

__all__ = [
    "HIGH",
    "LOW",
    "NO_NEWS",
    "UNANSWERED",
    "Closed",
    "closed",
    "ended",
    "left",
    "merged",
    "started",
]

LOW = 0.25
"""Below this share of a limit left, no session starts."""
HIGH = 0.8
"""At or above this share left, a session starts on each fresh answer."""
FALLING = 0.02
"""A drop of more than this share of a limit between two readings is a fall."""
UNANSWERED = 2
"""Sessions that may start on an account and model before the API answers anything about
them (the first of a run among them): a run never starts a crowd on one reading."""
NO_NEWS = timedelta(seconds=60)
"""Starts the API has not answered for this long do not hold the next one back (a sandbox
may take that long to build before its session asks anything)."""
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


def closed(
    state: RoomState | None, now: datetime, settle: timedelta, paced: bool = True
) -> Closed | None:
    """Why a new session may not start on ``state``'s account and model; ``None``: it may.

    ``paced``: the API states its room on every answer, so the next start waits for its
    answer to the last (an API that states it only in a 429 is not waited for).
    """
    if state is None:
        return None
    latest, start = state.latest, state.last_start
    name = f"{state.account} ({state.model})"
    paced = paced or (latest is not None and bool(latest.buckets()))
    if paced and start is not None and state.unanswered >= UNANSWERED and now - start < NO_NEWS:
        return Closed(
            f"{name}: waiting for the API's answer to the {state.unanswered} sessions started "
            "since it last answered"
        )
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
        update: dict[str, object] = {}
        if state.latest is None or reading.observed_at > state.latest.observed_at:
            update["latest"] = reading
        after_start = state.last_start is None or reading.observed_at > state.last_start
        if state.since_start is None and after_start:
            update["since_start"] = reading
        counts = {"unanswered": 0} if after_start else {}
        by_key[key] = state.model_copy(update=update | counts)
    return tuple(by_key[k] for k in sorted(by_key))


def ended(
    rooms: Iterable[RoomState], account: str, model: str, began: datetime
) -> tuple[RoomState, ...]:
    """``rooms`` after the session that began at ``began`` ended.

    Had the API not answered since it began, its weight is gone with it: the next start
    does not wait for an answer that will not come.
    """
    out = []
    for room in rooms:
        unanswered = room.latest is None or room.latest.observed_at <= began
        if (room.account, room.model) == (account, model) and unanswered and room.unanswered:
            room = room.model_copy(update={"unanswered": room.unanswered - 1})
        out.append(room)
    return tuple(out)


def started(
    rooms: Iterable[RoomState], account: str, model: str, now: datetime
) -> tuple[RoomState, ...]:
    """``rooms`` after a session of ``model`` started on ``account`` at ``now``."""
    by_key = {(r.account, r.model): r for r in rooms}
    state = by_key.get((account, model)) or RoomState(account=account, model=model)
    update = {"last_start": now, "since_start": None, "unanswered": state.unanswered + 1}
    by_key[(account, model)] = state.model_copy(update=update)
    return tuple(by_key[k] for k in sorted(by_key))
