"""A gateway that died mid-request: a line in the ledger of every attempt it cut.

An agent whose request the dead gateway was answering sees its connection cut, and its
CLI may give up. Whether that was the harness's doing must not rest on what the agent
prints (a model can print "connection refused" as well as a CLI can), so the worker that
sees the gateway's process end writes it down where the agent cannot: the ledger of each
request the process was serving (its in-flight notes, :mod:`.inflight`), whenever the
worker sees the death, and the ledgers of the attempts holding a grant at that moment
(their next request may have been refused while no gateway listened). The classifier
treats the line as the host's failure (:data:`OUTAGE`), and only when it is the last
thing the ledger recorded: a session that went on to get answers from the restarted
gateway was not ended by it.
"""

from __future__ import annotations

import time
from pathlib import Path

from durabench.gateway.grants import GrantStore
from durabench.gateway.inflight import cut_requests
from durabench.gateway.ledger import LedgerEntry, append_entry

__all__ = ["OUTAGE", "record_outage"]

OUTAGE = "gateway restarted"
"""The ledger's ``refused`` for a request the gateway's death cut."""


def record_outage(store: GrantStore, why: str = OUTAGE, pid: int | None = None) -> int:
    """Append ``why`` to the ledgers the ended gateway ``pid`` cut and those of live grants.

    Returns how many ledgers got it (each at most once).
    """
    now, lines = time.time(), dict[Path, LedgerEntry]()
    cut = cut_requests(store.root, pid) if pid is not None else []
    for ledger, provider, held in [*cut, *((Path(g.ledger), g.provider, 0) for g in store.live())]:
        line = lines.get(ledger) or LedgerEntry(
            at=now, provider=provider, path="", status=502, refused=why
        )
        # What the cut requests held of the budget stays charged (the restarted gateway's
        # budget starts from the ledger's ``charged``).
        lines[ledger] = line.model_copy(update={"charged": line.charged + held})
    done = 0
    for ledger, entry in lines.items():
        try:
            append_entry(ledger, entry)
        except OSError:  # the attempt's directory is gone: it has ended
            continue
        done += 1
    return done
