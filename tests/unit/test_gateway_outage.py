"""A gateway that died is the harness's failure, and the ledgers of the attempts it served say so.

The agent cannot write its ledger (it lives on the host) and cannot tell the worker's
supervisor that the gateway died: the supervisor sees the process exit. So the line the
supervisor adds to each live attempt's ledger is evidence the agent cannot forge, and
only attempts that held a grant at that moment get it.
"""

from __future__ import annotations

from pathlib import Path

from durabench.gateway import Grant, GrantStore
from durabench.gateway.ledger import read_ledger
from durabench.gateway.outage import record_outage


def _grant(store: GrantStore, tmp_path: Path, attempt: str) -> Path:
    ledger = tmp_path / f"{attempt}.jsonl"
    doc = {
        "attempt": attempt,
        "agent": "claude-code",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "ledger": str(ledger),
    }
    store.grant(Grant.model_validate(doc))
    return ledger


def test_every_live_attempt_gets_the_outage_and_an_ended_one_does_not(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "gateway")
    live = _grant(store, tmp_path, "run-1-a-baseline-1")
    ended = _grant(store, tmp_path, "run-1-b-baseline-1")
    store.revoke("run-1-b-baseline-1")

    assert record_outage(store, "gateway restarted") == 1

    metered = read_ledger(live)
    assert metered is not None
    assert (metered.last_status, metered.last_refused) == (502, "gateway restarted")
    assert metered.rate_limited == metered.auth_refused == metered.overloaded == 0
    assert not ended.exists()


def test_no_grants_no_lines(tmp_path: Path) -> None:
    assert record_outage(GrantStore(tmp_path / "gateway"), "gateway restarted") == 0
