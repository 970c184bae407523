"""A grant lapses when its worker stops renewing it: a dead worker's sessions stop paying.

The worker killed on a live host leaves its sessions running and its gateway serving;
its attempts start over elsewhere after the host timeout. Each grant holds for its lease
past its last renewal (the host timeout and a minute), so the sessions left behind are
refused by the gateway about when their attempts move, not when a sweep comes.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

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
