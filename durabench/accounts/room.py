"""How many sessions of a model an account carries at once: what the API says is left.

The gateways read every answer's rate-limit headers (:mod:`durabench.gateway.room`); the
account pool keeps the newest reading of each account and model from every host, and
before a slot is leased for a session of a model, :func:`decide` says whether one more
may start on the account. Each account and model has a number of sessions it is
*allowed* at once (:class:`~durabench.models.room.RoomState`):

* the API answered 429 and said to wait: no new session until then, and one fewer
  allowed than are running;
* less than :data:`LOW` of a limit is left (its refill projected forward, as the API's
  reset time says): none starts, and one fewer is allowed than are running;
* fewer running than allowed: one starts (a session that ended is replaced at once);
* as many running as allowed: one more is allowed once the API has answered every one
  of them (the gateways count the sessions they passed requests of; with :data:`HIGH`
  left, all but a third, so a roomy account grows by half each round), the last change
  has had ``settle`` to show in what the API says is left (a third of it with
  :data:`HIGH` left), and it is not falling; falling, one fewer is allowed.

So the run starts fewer sessions as ``remaining`` falls and more as it recovers; a
session already running is never stopped (its CLI's own retry answers a 429). Two are
allowed before the API has said anything; an API that states no room on its answers
(Gemini's, which speaks only in a 429) is bound by its slots and its 429s alone. Pure:
the pool passes ``now``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from durabench.models.room import Bucket, RoomReading, RoomState, Weighed
from durabench.wording import counted

__all__ = [
    "FALLING",
    "LOW",
    "NO_NEWS",
    "Closed",
    "decide",
    "left",
    "merged",
    "room_line",
    "started",
    "weighed",
]

LOW = 0.25
"""Below this share of a limit left, no session starts, and fewer are allowed."""
HIGH = 0.8
"""This much left is spare room: growth need not wait for every new session to show."""
FALLING = 0.02
"""A drop of more than this share of a limit since the last change is a fall."""
NO_NEWS = timedelta(seconds=60)
"""With no answer from the API for this long since the last change, one more is allowed
(a sandbox may take that long to build before its session asks anything)."""
_FALLS = "falling"
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


def decide(
    state: RoomState, running: int, now: datetime, settle: timedelta, paced: bool = True
) -> tuple[RoomState, Closed | None]:
    """Whether one more session may start (``None``) or why not; the state after asking.

    Args:
        state: The account and model's room.
        running: Its sessions running now (leases held).
        now: The pool's time.
        settle: How long a change of the allowed number shows before the next.
        paced: The API states its room on every answer (:data:`STATING_APIS`).
    """
    latest = state.latest
    name = f"{state.account} ({state.model})"
    if latest is not None and latest.full_until is not None and latest.full_until > now:
        until = latest.full_until
        why = f"{name}: the API answered 429 (rate limit); none starts before {until:%H:%M:%S} UTC"
        return _fewer(state, running, now, settle), Closed(why, until)
    if not (paced or (latest is not None and latest.buckets())):
        return state, None
    share = left(latest, now) if latest is not None else 1.0
    if share < LOW:
        why = f"{name}: the API says {share:.0%} of its rate limit is left"
        return _fewer(state, running, now, settle), Closed(why)
    if running < state.allowed:
        return state, None
    waiting = _wait_to_grow(state, running, share, now, settle)
    if waiting.startswith(_FALLS):  # more than it refills: one fewer, as sessions end
        return _fewer(state, running, now, settle), Closed(f"{name}: {waiting}")
    if waiting:
        return state, Closed(f"{name}: {counted(running, 'session')} running, {waiting}")
    grown = {"allowed": running + 1, "changed_at": now, "base": latest}
    return state.model_copy(update=grown), None


def _wait_to_grow(
    state: RoomState, running: int, share: float, now: datetime, settle: timedelta
) -> str:
    """Why one more may not be allowed yet; ``""``: it may."""
    latest, since = state.latest, state.changed_at
    if since is None:
        return ""
    if now - since >= NO_NEWS and (latest is None or latest.observed_at <= since):
        return ""  # the API has said nothing since: its answers do not reach this pool
    wait = settle / 3 if share >= HIGH else settle  # spare room: a quicker look will do
    if latest is None or latest.observed_at - since < wait:
        return "the API's answers since the last change are awaited"
    seen = weighed(state, now)
    unseen = seen // 2 if share >= HIGH else 0  # spare room: grow by half while it holds
    if running - seen > unseen and now - since < NO_NEWS:
        return f"the API has answered {seen} of them so far"
    if state.base is None:
        return "" if share >= HIGH else f"{share:.0%} of its rate limit left"
    was, now_left = left(state.base, state.base.observed_at), left(latest, latest.observed_at)
    if now_left < was - FALLING:
        return f"{_FALLS}: {now_left:.0%} of its rate limit left, from {was:.0%}"
    return ""


def _fewer(state: RoomState, running: int, now: datetime, settle: timedelta) -> RoomState:
    """One fewer allowed than are running, at most once per ``settle``."""
    since = state.changed_at
    if since is not None and now - since < settle:
        return state
    fewer = max(1, min(state.allowed, running - 1))
    return state.model_copy(update={"allowed": fewer, "changed_at": now, "base": state.latest})


def merged(rooms: Iterable[RoomState], readings: Iterable[RoomReading]) -> tuple[RoomState, ...]:
    """``rooms`` with ``readings`` taken in: the newest per account and model wins.

    A 429's wait still ahead of it is kept (:meth:`~durabench.models.room.RoomReading.then`),
    and each host's newest count of the sessions it has seen.
    """
    by_key = {(r.account, r.model): r for r in rooms}
    for reading in readings:
        key = reading.key()
        state = by_key.get(key) or RoomState(account=key[0], model=key[1])
        latest = reading if state.latest is None else state.latest.then(reading)
        state = state.model_copy(update={"latest": latest})
        hosts = {w.host: w for w in state.weighed}
        mine = hosts.get(reading.host)
        if mine is None or reading.observed_at > mine.observed_at:
            hosts[reading.host] = Weighed(
                host=reading.host, sessions=reading.sessions, observed_at=reading.observed_at
            )
        state = state.model_copy(update={"weighed": tuple(hosts[h] for h in sorted(hosts))})
        by_key[key] = state
    return tuple(by_key[k] for k in sorted(by_key))


def weighed(state: RoomState, now: datetime) -> int:
    """Running sessions the API's numbers weigh: every host's count of the last minute."""
    return sum(w.sessions for w in state.weighed if now - w.observed_at <= WINDOW)


def started(
    rooms: Iterable[RoomState], account: str, model: str, now: datetime
) -> tuple[RoomState, ...]:
    """``rooms`` after a session of ``model`` started on ``account`` at ``now``.

    The first start of an account and model starts its clock (see :data:`NO_NEWS`).
    """
    by_key = {(r.account, r.model): r for r in rooms}
    state = by_key.get((account, model)) or RoomState(account=account, model=model)
    if state.changed_at is None:
        state = state.model_copy(update={"changed_at": now, "base": state.latest})
    by_key[(account, model)] = state
    return tuple(by_key[k] for k in sorted(by_key))


def room_line(room: RoomState) -> str:
    """One line of ``accounts status``: what the API last said, and how many may run."""
    head = f"{room.account} · {room.model}: {room.allowed} at once"
    latest = room.latest
    if latest is None:
        return head
    kinds = (
        ("requests", latest.requests),
        ("input tokens", latest.input_tokens),
        ("output tokens", latest.output_tokens),
    )
    said = [f"{b.remaining:,} of {b.limit:,} {kind}" for kind, b in kinds if b is not None]
    full = f", full until {latest.full_until:%H:%M:%S} UTC" if latest.full_until else ""
    when = f"{latest.observed_at:%H:%M:%S} UTC"
    return f"{head}; the API said {', '.join(said) or 'a 429'} left a minute{full} ({when})"
