"""The pool starts fewer sessions as the API's ``remaining`` falls, more as it recovers.

Walked by hand through the readings a gateway would carry to the pool: each step states
what the API said and whether a new session may start (:mod:`durabench.accounts.room`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from durabench.accounts import Pool
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


def _said(account: str, at: float, remaining: int, limit: int = 30, **more: object) -> RoomReading:
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
    # Nothing known: the slots are the first guess, but two at most before the API answers.
    assert _ask(pool, 0).lease is not None
    assert _ask(pool, 0.1, n=1).lease is not None
    held = _ask(pool, 0.2, n=2)
    assert held.lease is None and held.busy and held.room
    assert "waiting for the API's answer to the 2 sessions" in held.why
    # The first answer: 29 of 30 left (97% >= 80%): more may start, two per answer.
    assert _ask(pool, 2, _said("a", 1, 29), n=3).lease is not None
    assert _ask(pool, 2.1, n=4).lease is not None
    assert _ask(pool, 2.5, n=5).lease is None
    # 20 of 30 (67%): under the high mark, the last start settles for 15 s first.
    settling = _ask(pool, 4, _said("a", 3, 20), n=6)
    assert settling.lease is None and "settles" in settling.why
    # 15 s on, falling to 12 of 30 (40%): no start while it falls.
    falling = _ask(pool, 19, _said("a", 18, 12), n=7)
    assert falling.lease is None and "falling" in falling.why
    # 6 of 30 (20% < 25%): none.
    low = _ask(pool, 20, _said("a", 20, 6), n=8)
    assert low.lease is None and "20% of its rate limit is left" in low.why
    # Sessions ended and the bucket refilled: 29 of 30 again: starts resume.
    assert _ask(pool, 60, _said("a", 59, 29), n=9).lease is not None


def test_a_steady_level_under_the_high_mark_takes_one_more_after_settling() -> None:
    """50% left and holding for the 15 s after the last start: one more may start."""
    pool = _pool("a")
    pool.take_rooms([_said("a", 0, 15)])
    assert _ask(pool, 1).lease is not None  # 50%, no start of the pool's to settle yet
    pool.take_rooms([_said("a", 2, 15)])
    assert _ask(pool, 3, n=1).lease is None  # settling
    assert _ask(pool, 18, _said("a", 17.5, 15), n=2).lease is not None  # 15.5 s, level


def test_a_quiet_account_refills_as_its_reset_says() -> None:
    """6 of 30 left at 0 s, refilling to whole at 48 s: at 36 s it holds 24 (80%)."""
    pool = _pool("a")
    pool.take_rooms([_said("a", 0, 6)])
    assert _ask(pool, 1).lease is None  # 6.5 of 30: 22%
    assert _ask(pool, 36, n=1).lease is not None  # 6 + 24 * 36/48 = 24 of 30: 80%


def test_a_429_holds_new_starts_until_the_api_says() -> None:
    pool = _pool("a")
    full = _said("a", 0, 0, full_until=T0 + timedelta(seconds=30))
    refused = _ask(pool, 1, full)
    assert refused.lease is None and "429" in refused.why
    assert refused.busy and refused.room  # asked again soon: a running session is not touched
    # At 31 s the bucket has refilled 31 of its 60 s: 15.5 of 30 (52%), not falling.
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


def test_the_newest_reading_wins_whoever_carries_it() -> None:
    """Two hosts carry readings in any order: an older one never replaces a newer one."""
    pool = _pool("a")
    pool.take_rooms([_said("a", 10, 3)])
    pool.take_rooms([_said("a", 5, 30)])  # a host that saw the account earlier
    assert _ask(pool, 11).lease is None
    latest = pool.rooms()[0].latest
    assert latest is not None and latest.requests is not None and latest.requests.remaining == 3


def test_an_api_that_states_no_room_is_not_waited_for() -> None:
    """Gemini states its room only in a 429: starts are not held for an answer."""
    pool = _pool("a")
    for n in range(4):
        assert _ask(pool, n / 10, n=n, paced=False).lease is not None


def test_starts_that_ended_unanswered_or_long_unanswered_hold_nothing_back() -> None:
    pool = _pool("a")
    first, second = _ask(pool, 0).lease, _ask(pool, 0, n=1).lease
    assert first is not None and second is not None and _ask(pool, 1, n=2).lease is None
    pool.release(ReleaseRequest(lease_id=first.lease_id), T0 + timedelta(seconds=2))
    third = _ask(pool, 3, n=3).lease  # one session ended before any answer
    assert third is not None
    assert _ask(pool, 4, n=4).lease is None
    assert _ask(pool, 64, n=5).lease is not None  # 61 s unanswered (NO_NEWS is 60 s)
