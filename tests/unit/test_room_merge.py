"""A 429's wait outlives the answers that come after it, in the gateway's book and the pool.

Ten sessions share an account: one is refused with ``retry-after: 30``, and another's
answer (a 200 whose stream began before the 429, or any later one) arrives a moment
later. The newest reading's numbers win, but the wait the 429 named still holds new
starts until it passes: every merge keeps the latest ``full_until`` still ahead of the
newest reading (a property over any readings in any order, for both mergers).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.accounts import Pool
from durabench.accounts.room import merged
from durabench.gateway.grants import GrantStore
from durabench.gateway.room_book import RoomBook, read_rooms
from durabench.models.accounts import LeaseRequest, PoolAccount, PoolState
from durabench.models.room import Bucket, RoomReading, RoomState

T0 = datetime(2026, 11, 29, 11, 0, tzinfo=UTC)
MODEL = "claude-haiku-4-5"


def _said(at: float, remaining: int, full_for: float | None = None) -> RoomReading:
    """What an answer read ``at`` seconds in said: ``remaining`` of 30 requests, and a 429's
    wait of ``full_for`` seconds."""
    seen = T0 + timedelta(seconds=at)
    return RoomReading(
        provider="anthropic",
        account="a",
        model=MODEL,
        observed_at=seen,
        requests=Bucket(limit=30, remaining=remaining),
        full_until=None if full_for is None else seen + timedelta(seconds=full_for),
        host="h1",
        sessions=10,
    )


def _starts(pool: Pool, at: float, n: int) -> bool:
    req = LeaseRequest(
        agent="claude-code",
        model=MODEL,
        holder_workflow_id=f"w{n}",
        holder_run_id="r",
        label=f"arm {n}",
        lease_id=f"lease-{n}",
    )
    return pool.grant(req, req.lease_id, T0 + timedelta(seconds=at)).lease is not None


def test_a_200_after_a_429_does_not_let_the_pool_start_sessions() -> None:
    for order in ([_said(10, 0, 30), _said(12, 25)], [_said(12, 25), _said(10, 0, 30)]):
        pool = Pool(PoolState(accounts=(PoolAccount(id="a", agent="claude-code", slots=16),)))
        pool.take_rooms(order[:1])
        pool.take_rooms(order[1:])
        assert not _starts(pool, 13, 0), order
        (room,) = pool.rooms()
        assert room.latest is not None and room.latest.requests is not None
        assert room.latest.requests.remaining == 25  # the newest numbers
        assert room.latest.full_until == T0 + timedelta(seconds=40)  # the 429's wait
        assert _starts(pool, 41, 1)


def test_the_gateways_book_keeps_a_429s_wait_and_the_newest_numbers(tmp_path: Path) -> None:
    book = RoomBook(GrantStore(tmp_path))
    book.take(_said(10, 0, 30))
    book.take(_said(12, 25))  # a later 200
    book.take(_said(5, 28))  # a stream that began before both, ended last
    (kept,) = read_rooms(tmp_path, T0 + timedelta(seconds=13))
    assert kept.observed_at == T0 + timedelta(seconds=12)
    assert kept.requests is not None and kept.requests.remaining == 25
    assert kept.full_until == T0 + timedelta(seconds=40)


def test_a_wait_that_has_passed_is_not_carried() -> None:
    (room,) = merged((), [_said(10, 0, 5), _said(20, 25)])
    assert room.latest is not None and room.latest.full_until is None


def _by_pool(readings: Sequence[RoomReading]) -> RoomReading | None:
    rooms: tuple[RoomState, ...] = ()
    for reading in readings:
        rooms = merged(rooms, [reading])
    return rooms[0].latest if rooms else None


def _by_book(readings: Sequence[RoomReading]) -> RoomReading | None:
    with tempfile.TemporaryDirectory() as root:
        book = RoomBook(GrantStore(Path(root)))
        for reading in readings:
            book.take(reading)
        kept = read_rooms(Path(root), T0, fresh=timedelta(days=1))
    return kept[0] if kept else None


_READINGS = st.lists(
    st.builds(
        _said,
        at=st.integers(0, 120),
        remaining=st.integers(0, 30),
        full_for=st.one_of(st.none(), st.integers(0, 90)),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(readings=_READINGS, merge=st.sampled_from([_by_pool, _by_book]))
def test_no_merge_drops_a_wait_still_ahead_of_the_newest_reading(
    readings: list[RoomReading], merge: Callable[[Sequence[RoomReading]], RoomReading | None]
) -> None:
    """Whatever the readings and their order: the newest numbers, and no wait still ahead
    of them dropped (none invented, none that has passed carried)."""
    kept = merge(readings)
    newest = max(r.observed_at for r in readings)
    assert kept is not None and kept.observed_at == newest
    ahead = [r.full_until for r in readings if r.full_until and r.full_until > newest]
    own = [r.full_until for r in readings if r.observed_at == newest]
    assert all(kept.full_until is not None and kept.full_until >= f for f in ahead)
    assert kept.full_until in ahead + own
