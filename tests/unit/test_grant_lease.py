"""A grant lapses when its worker stops renewing it: a dead worker's sessions stop paying.

The worker killed on a live host leaves its sessions running and its gateway serving;
its attempts start over elsewhere after the host timeout. Each grant holds for its lease
past its last renewal (the host timeout and a minute), so the sessions left behind are
refused by the gateway about when their attempts move, not when a sweep comes.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from activities.grant_lease import renewing
from durabench.gateway import Grant, GrantStore


def _grant(lease_sec: float | None) -> Grant:
    return Grant(
        attempt="r-t-baseline-1",
        agent="claude-code",
        provider="anthropic",
        model="claude-haiku-4-5",
        ledger="/tmp/ledger.jsonl",
        lease_sec=lease_sec,
    )


def _age(store: GrantStore, token: str, seconds: float) -> None:
    """Make the grant's last renewal ``seconds`` ago."""
    path = store._file(token)
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_grant_not_renewed_within_its_lease_is_refused(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    token = store.grant(_grant(lease_sec=360.0))
    _age(store, token, 359.0)
    assert store.find(token) is not None
    _age(store, token, 361.0)  # the worker died 6 minutes ago: its attempt has moved
    assert store.find(token) is None


def test_a_renewal_holds_the_grant_again(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    token = store.grant(_grant(lease_sec=360.0))
    _age(store, token, 361.0)
    store.renew("r-t-baseline-1")
    assert store.find(token) is not None


def test_a_revoked_grant_is_not_brought_back_by_a_late_renewal(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    token = store.grant(_grant(lease_sec=360.0))
    store.revoke("r-t-baseline-1")
    store.renew("r-t-baseline-1")
    assert store.find(token) is None


def test_a_grant_without_a_lease_holds_until_revoked(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    token = store.grant(_grant(lease_sec=None))
    _age(store, token, 30 * 86400.0)
    assert store.find(token) is not None


def test_a_running_agent_phase_renews_its_grant(tmp_path: Path) -> None:
    store = GrantStore(tmp_path)
    token = store.grant(_grant(lease_sec=360.0))
    _age(store, token, 1000.0)

    async def phase() -> None:
        async with renewing(store, "r-t-baseline-1", every_s=0.01):
            await asyncio.sleep(0.05)

    asyncio.run(phase())
    assert store.find(token) is not None


def test_a_lapsed_grant_is_not_live(tmp_path: Path) -> None:
    """A dead worker's grant file stays until a sweep; its attempt runs no more here, so
    the host's spend broker gives the run's block back and rate shares count it out."""
    store = GrantStore(tmp_path)
    token = store.grant(_grant(lease_sec=360.0))
    assert [g.attempt for g in store.live()] == ["r-t-baseline-1"]
    _age(store, token, 361.0)
    assert store.live() == []


@settings(max_examples=100, deadline=None)
@given(
    grants=st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from([60.0, 360.0])),  # the lease
            st.sampled_from([0.0, 59.0, 61.0, 359.0, 361.0, 86400.0]),  # since its renewal
            st.booleans(),  # revoked
        ),
        max_size=6,
    )
)
def test_the_live_grants_are_those_a_key_would_find(
    grants: list[tuple[float | None, float, bool]],
) -> None:
    """The family: whatever asks which attempts may still run here (the key's check, the
    spend broker, the rate shares) gets the same answer."""
    with tempfile.TemporaryDirectory() as root:
        store = GrantStore(Path(root))
        found = set()
        for n, (lease, age, revoked) in enumerate(grants):
            grant = _grant(lease).model_copy(update={"attempt": f"r-t-baseline-{n}"})
            token = store.grant(grant)
            _age(store, token, age)
            if revoked:
                store.revoke(grant.attempt)
            if store.find(token) is not None:
                found.add(grant.attempt)
        assert {g.attempt for g in store.live()} == found
