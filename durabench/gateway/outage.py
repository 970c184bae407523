"""A gateway that died mid-request: a line in the ledger of every attempt it was serving.

An agent whose request the dead gateway was answering sees its connection cut, and its
CLI may give up. Whether that was the harness's doing must not rest on what the agent
prints (a model can print "connection refused" as well as a CLI can), so the worker that
sees the gateway's process end writes it down where the agent cannot: the ledgers of the
attempts holding a grant at that moment. The classifier treats the line as the host's
failure (:data:`OUTAGE`), and only when it is the last thing the ledger recorded: a
session that went on to get answers from the restarted gateway was not ended by it.
"""

from __future__ import annotations

import time
from pathlib import Path

from durabench.gateway.grants import GrantStore
from durabench.gateway.ledger import LedgerEntry, append_entry

__all__ = ["OUTAGE", "record_outage"]

OUTAGE = "gateway restarted"
"""The ledger's ``refused`` for a request the gateway's death cut."""


def record_outage(store: GrantStore, why: str = OUTAGE) -> int:
    """Append ``why`` to the ledger of every attempt with a live grant; how many got it."""
    now, recorded = time.time(), 0
    for grant in store.live():
        entry = LedgerEntry(at=now, provider=grant.provider, path="", status=502, refused=why)
        try:
            append_entry(Path(grant.ledger), entry)
        except OSError:  # the attempt's directory is gone: it has ended
            continue
        recorded += 1
    return recorded
