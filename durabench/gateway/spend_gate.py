"""A capped run's requests on this host, each reserved from the host's block before it goes.

The run's cap is shared by every host (:mod:`durabench.spend.book`); this host's gateway
holds a block of it, written by its worker in the run's ``held.json``
(:mod:`durabench.spend.purse`). A priced request of a capped run reserves its worst case
in dollars (:func:`worst_request`) from the block; when the block does not cover it, the
gateway says how much it wants in ``used.json`` and waits, up to :data:`WAIT_S`, for the
worker to bring a larger block. What the cap no longer covers is refused (``spend cap``
in the ledger, a 429 the agent sees as a limit): no request leaves that the cap cannot
pay for, and the attempt's class says the harness stopped it (``infra_spend_cap``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from durabench.gateway.allowlist import allowed
from durabench.gateway.budget import (
    BYTES_PER_TOKEN,
    SERVER_TOOL_USE_TOKENS,
    server_tool_uses,
    worst_case,
)
from durabench.gateway.grants import Grant
from durabench.gateway.ledger import LedgerEntry, costs_whole_hold
from durabench.gateway.providers import ProviderName
from durabench.gateway.refusals import Refused
from durabench.gateway.request import AgentRequest
from durabench.spend.book import usd
from durabench.spend.purse import WAIT_S, Hold, Purse, SpendFiles, Used
from durabench.spend.terms import SpendTerms, cost_micros, worst_micros

__all__ = [
    "SPEND_CAP",
    "WAIT_S",
    "SpendCapReached",
    "SpendGate",
    "UNSETTLED_AT_RESTART",
    "spend_hold",
    "worst_request",
]

SPEND_CAP = "spend cap"
"""``refused`` of a request the run's spend cap no longer covers: the harness's stop."""
_POLL_S = 0.05
UNSETTLED_AT_RESTART = "(unsettled at a gateway restart)"
"""Where a restarted gateway counts what its requests in flight held when it stopped
(``Used.spent``, beside the task ids): their answers may have been charged, and no one
settled them, so each costs its whole hold."""


class SpendCapReached(Exception):
    """The run's cap does not cover the request (the message says how far it got)."""


def worst_request(terms: SpendTerms, provider: ProviderName, doc: dict[str, Any], size: int) -> int:
    """The most a request can cost in micro-dollars (:func:`~.budget.worst_case`'s tokens).

    Its input is its body's estimate and what its server tools may add; its output is
    the cap it asks for (or the default reserve) times the answers it asks for.
    """
    if terms.rates is None:
        return 0
    tools = server_tool_uses(provider, doc) * SERVER_TOOL_USE_TOKENS
    output = worst_case(provider, doc, 0) - tools
    return worst_micros(terms.rates, size // BYTES_PER_TOKEN + tools, output)


class SpendGate:
    """Every capped run's purse on this host, kept in step with its two files."""

    def __init__(self, root: Path, wait_s: float = WAIT_S) -> None:
        """Files under ``root`` (the grant store's directory)."""
        self.root = root
        self.wait_s = wait_s
        self.purses: dict[str, tuple[Purse, SpendFiles]] = {}
        self.waiting: dict[str, int] = {}
        """Micro-dollars the requests waiting for a block need, by run."""
        self.asked: dict[str, int] = {}
        """Requests that have waited for a block, by run (``Used.asked``)."""

    def _purse(self, run_id: str) -> tuple[Purse, SpendFiles]:
        if run_id not in self.purses:
            files = SpendFiles(self.root, run_id)
            used = files.used()  # a restarted gateway goes on from what it had charged
            spent = dict(used.spent)
            if used.reserved > 0:
                spent[UNSETTLED_AT_RESTART] = spent.get(UNSETTLED_AT_RESTART, 0) + used.reserved
            self.purses[run_id] = (Purse(spent=spent), files)
            self.asked[run_id] = used.asked
            if used.reserved > 0:
                self._write(run_id)  # what was in flight is spent now, for the broker too
        return self.purses[run_id]

    def _write(self, run_id: str) -> None:
        purse, files = self._purse(run_id)
        want = max(0, self.waiting.get(run_id, 0) - purse.room())
        asked = self.asked.get(run_id, 0)
        files.write_used(
            Used(
                run_id=run_id,
                spent=dict(purse.spent),
                reserved=purse.reserved,
                want=want,
                asked=asked,
                seen=purse.held,
            )
        )

    async def reserve(self, terms: SpendTerms, worst: int) -> Hold:
        """Hold ``worst`` micro-dollars for a request of ``terms``' attempt.

        Raises:
            SpendCapReached: the model has no price, or the cap does not cover it.
        """
        if terms.rates is None:
            raise SpendCapReached("the model has no price, and a capped run pays only priced ones")
        purse, files = self._purse(terms.run_id)
        deadline = time.monotonic() + self.wait_s
        waited, ask = False, 0
        try:
            while True:
                held = files.held()
                purse.held = held.held
                hold = purse.reserve(terms.task_id, worst)
                if hold is not None:
                    return hold
                if not waited:
                    waited = True
                    ask = self.asked[terms.run_id] = self.asked.get(terms.run_id, 0) + 1
                    self.waiting[terms.run_id] = self.waiting.get(terms.run_id, 0) + worst
                    self._write(terms.run_id)
                elif held.refused >= ask or time.monotonic() >= deadline:
                    raise SpendCapReached(
                        f"the run's spend cap does not cover this request (up to "
                        f"${usd(worst):.4f}; this host holds ${usd(purse.room()):.4f} of it "
                        "unspent)"
                    )
                await asyncio.sleep(_POLL_S)
        finally:
            if waited:
                self.waiting[terms.run_id] -= worst
            self._write(terms.run_id)

    def settle(self, terms: SpendTerms, hold: Hold | None, entry: LedgerEntry | None) -> None:
        """Charge the request's ledgered usage (its whole hold if cut or unmetered).

        The rule is the token budget's: :func:`~durabench.gateway.ledger.costs_whole_hold`.
        """
        if hold is None or hold.settled or terms.rates is None:
            return
        charged = 0
        if entry is not None:
            u = entry.usage
            charged = cost_micros(terms.rates, u.input, u.output, u.cache_read, u.cache_write)
            if costs_whole_hold(entry.status, entry.refused, charged):
                charged = max(charged, hold.amount)
        purse, _ = self._purse(terms.run_id)
        purse.settle(hold, charged)
        self._write(terms.run_id)


async def spend_hold(gate: SpendGate, grant: Grant, req: AgentRequest) -> Hold | None:
    """The request's hold on its run's cap (``None``: no cap, or a request that costs nothing).

    Raises:
        Refused: the cap does not cover it (429, ledgered ``spend cap``).
    """
    terms = grant.spend
    route = allowed(grant.provider, req.method, req.path)
    if terms is None or route is None or not route.priced:
        return None
    worst = worst_request(terms, grant.provider, req.doc, len(req.body))
    try:
        return await gate.reserve(terms, worst)
    except SpendCapReached as exc:
        raise Refused(429, SPEND_CAP, "rate_limit_error", f"durabench: {exc}") from None
