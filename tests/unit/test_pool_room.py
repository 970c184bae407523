"""The pool starts fewer sessions as the API's ``remaining`` falls, more as it recovers.

Walked by hand through the readings a gateway would carry to the pool: each step states
what the API said (of 30 requests a minute, refilling evenly) and whether a new session
may start (:mod:`durabench.accounts.room`; ``settle`` is 15 s, a third of it with 80 %
left).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from durabench.accounts import Pool, room_line
from durabench.accounts.room import weighed
from durabench.models.accounts import (
    LeaseGrant,
    LeaseRequest,
    PoolAccount,
    PoolState,
    ReleaseRequest,
)
from durabench.models.room import Bucket, RoomReading

T0 = datetime(2026, 11, 29, 11, 0, tzinfo=UTC)
MODEL = "claude-haiku-4-5"


def _pool(*ids: str, slots: int = 8) -> Pool:
    accounts = tuple(PoolAccount(id=i, agent="claude-code", slots=slots) for i in ids)
    return Pool(PoolState(accounts=accounts))


def _said(
    account: str, at: float, remaining: int, limit: int = 30, sessions: int = 0, **more: object
) -> RoomReading:
    """The API's answer ``at`` seconds in: ``remaining`` of ``limit`` requests a minute, the
    bucket whole again when the missing ones have refilled at ``limit`` a minute."""
    seen = T0 + timedelta(seconds=at)
    reset = seen + timedelta(seconds=60 * (limit - remaining) / limit)
    bucket = Bucket(limit=limit, remaining=remaining, reset_at=reset)
    return RoomReading(
        provider="anthropic",
        account=account,
        model=MODEL,
        observed_at=seen,
        requests=bucket,
        host="h1",
        sessions=sessions,
        **more,  # type: ignore[arg-type]
    )


def _ask(
    pool: Pool, at: float, *said: RoomReading, n: int = 0, model: str = MODEL, paced: bool = True
) -> LeaseGrant:
    req = LeaseRequest(
        agent="claude-code",
        model=model,
        paced=paced,
        holder_workflow_id=f"w{n}",
        holder_run_id="r",
        label=f"arm {n}",
        lease_id=f"lease-{at}-{n}",
        rooms=said,
    )
    return pool.grant(req, req.lease_id, T0 + timedelta(seconds=at))


def test_starts_follow_what_the_api_says_is_left() -> None:
    pool = _pool("a")
    # Nothing known: two may start (the slots are the first guess, but not all at once).
    assert _ask(pool, 0).lease is not None and _ask(pool, 0, n=1).lease is not None
    held = _ask(pool, 0.2, n=2)
    assert held.lease is None and held.busy and held.room
    assert "the API's answers since the last change are awaited" in held.why
    # 5.5 s: both sessions answered, 29 of 30 left (>= 80 %, 5 s on): one more.
    granted = _ask(pool, 6, _said("a", 5.5, 29, sessions=2), n=3).lease
    assert granted is not None
    assert _ask(pool, 6.1, n=4).lease is None  # nothing said since that change
    # 11.5 s: 20 of 30 (67 %): under 80 % a change shows for 15 s first.
    assert _ask(pool, 12, _said("a", 11.5, 20, sessions=3), n=5).lease is None
    # 21.5 s: 14 of 30, from 29 when the third started: falling; one fewer allowed (2).
    falling = _ask(pool, 22, _said("a", 21.5, 14, sessions=3), n=6)
    assert falling.lease is None and "falling: 47% of its rate limit left, from 97%" in falling.why
    pool.release(ReleaseRequest(lease_id=granted.lease_id), T0 + timedelta(seconds=22.5))
    assert _ask(pool, 23, n=7).lease is None  # 2 running of 2 allowed: not replaced
    # 29.5 s: 6 of 30 (20 % < 25 %): none.
    low = _ask(pool, 29.5, _said("a", 29.5, 6, sessions=2), n=8)
    assert low.lease is None and "20% of its rate limit is left" in low.why
    # 59 s: refilled to 29 of 30 with two running, risen from 47 %: one more.
    assert _ask(pool, 60, _said("a", 59, 29, sessions=2), n=9).lease is not None


def test_a_session_that_ends_is_replaced_at_once() -> None:
    pool = _pool("a")
    first, second = _ask(pool, 0).lease, _ask(pool, 0, n=1).lease
    assert first is not None and second is not None and _ask(pool, 1, n=2).lease is None
    pool.release(ReleaseRequest(lease_id=first.lease_id), T0 + timedelta(seconds=2))
    assert _ask(pool, 3, n=3).lease is not None  # 1 running of 2 allowed


def test_an_api_that_never_answers_the_pool_holds_nothing_back_for_long() -> None:
    """No reading reaches the pool (its gateway is on another host): one more a minute."""
    pool = _pool("a")
    assert _ask(pool, 0).lease is not None and _ask(pool, 0, n=1).lease is not None
    assert _ask(pool, 59, n=2).lease is None
    assert _ask(pool, 61, n=3).lease is not None  # 61 s with no news (NO_NEWS is 60 s)


def test_a_quiet_account_refills_as_its_reset_says() -> None:
    """6 of 30 left at 0 s, refilling to whole at 48 s: at 36 s it holds 24 (80 %)."""
    pool = _pool("a")
    pool.take_rooms([_said("a", 0, 6)])
    low = _ask(pool, 1)
    assert low.lease is None and "22% of its rate limit is left" in low.why  # 6.5 of 30
    assert _ask(pool, 36, n=1).lease is not None


def test_a_429_holds_new_starts_until_the_api_says() -> None:
    pool = _pool("a")
    full = _said("a", 0, 0, full_until=T0 + timedelta(seconds=30))
    refused = _ask(pool, 1, full)
    assert refused.lease is None and "429" in refused.why
    assert refused.busy and refused.room  # asked again soon; a running session is untouched
    # At 31 s the bucket has refilled 31 of its 60 s: 15.5 of 30 (52 %).
    assert _ask(pool, 31, n=1).lease is not None


def test_a_full_account_sends_the_start_to_one_with_room() -> None:
    pool = _pool("a", "b")
    grant = _ask(pool, 0, _said("a", 0, 2), _said("b", 0, 30))
    assert grant.lease is not None and grant.lease.account_id == "b"
    assert grant.lease.model == MODEL


def test_an_attempt_that_calls_no_model_takes_the_slots_alone() -> None:
    pool = _pool("a", slots=2)
    pool.take_rooms([_said("a", 0, 0, full_until=T0 + timedelta(seconds=30))])
    assert _ask(pool, 1, model="").lease is not None
    assert _ask(pool, 1, n=1, model="").lease is not None
    assert _ask(pool, 1, n=2, model="").busy  # its slots, as before


def test_an_api_that_states_no_room_is_bound_by_its_slots_and_429s() -> None:
    """Gemini states its room only in a 429: starts are not held for its answers."""
    pool = _pool("a")
    for n in range(4):
        assert _ask(pool, n / 10, n=n, paced=False).lease is not None
    gemini_429 = RoomReading(
        provider="gemini",
        account="a",
        model=MODEL,
        observed_at=T0 + timedelta(seconds=1),
        full_until=T0 + timedelta(seconds=27),
    )
    assert _ask(pool, 2, gemini_429, n=5, paced=False).lease is None
    assert _ask(pool, 28, n=6, paced=False).lease is not None


def test_the_newest_reading_wins_whoever_carries_it() -> None:
    """Two hosts carry readings in any order: an older one never replaces a newer one."""
    pool = _pool("a")
    pool.take_rooms([_said("a", 10, 3)])
    pool.take_rooms([_said("a", 5, 30)])  # a host that saw the account earlier
    assert _ask(pool, 11).lease is None
    latest = pool.rooms()[0].latest
    assert latest is not None and latest.requests is not None and latest.requests.remaining == 3


def test_every_hosts_count_of_sessions_is_summed_while_fresh() -> None:
    pool = _pool("a")
    mine = _said("a", 0, 30, sessions=2)
    theirs = mine.model_copy(update={"host": "h2", "sessions": 3})
    pool.take_rooms([mine, theirs])
    (room,) = pool.rooms()
    assert weighed(room, T0 + timedelta(seconds=30)) == 5
    assert weighed(room, T0 + timedelta(seconds=61)) == 0  # a minute old: not counted


def test_accounts_status_says_what_the_api_said_and_how_many_may_run() -> None:
    pool = _pool("a")
    pool.take_rooms([_said("a", 5, 12)])
    assert room_line(pool.rooms()[0]) == (
        "a · claude-haiku-4-5: 2 at once; the API said 12 of 30 requests left a minute "
        "(11:00:05 UTC)"
    )
