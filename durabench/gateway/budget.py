"""An attempt's token budget, held before a request goes out rather than checked after.

Each priced request reserves its worst case (:func:`worst_case`: the output it may ask
for, plus its input estimated from its size) while spent and reserved tokens are still
under the budget; the reservation is settled with what the API reported once its answer
ends. So concurrent requests cannot all slip in under a budget none of them has spent
yet, and the attempt's total can pass its budget by at most one request's worst case.

One gateway process serves a host, so the tally lives in its memory: reserving is one
step with no ``await`` inside, which nothing else on the event loop can interleave. A
restarted gateway starts from what its ledger says was charged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from durabench.gateway.ledger import read_entries
from durabench.gateway.providers import ProviderName

__all__ = ["DEFAULT_OUTPUT_RESERVE", "Budgets", "Reservation", "worst_case"]

DEFAULT_OUTPUT_RESERVE = 32_000
"""Output tokens reserved for a request that sets no cap of its own."""
BYTES_PER_TOKEN = 3
"""A request's input is estimated at one token per this many bytes of its body: above
what prose or code takes (about four), so the estimate errs on the side of reserving."""


def worst_case(provider: ProviderName, doc: dict[str, Any], body_bytes: int) -> int:
    """The most tokens ``doc`` can cost: its output cap (or a default) and its input."""
    if provider == "gemini":
        config = doc.get("generationConfig") or doc.get("generation_config")
        config = config if isinstance(config, dict) else {}
        cap = _first_int(config, ("maxOutputTokens", "max_output_tokens"))
        answers = _first_int(config, ("candidateCount", "candidate_count"))
    else:
        cap = _first_int(doc, ("max_tokens", "max_output_tokens", "max_completion_tokens"))
        answers = _first_int(doc, ("n",))
    return (cap or DEFAULT_OUTPUT_RESERVE) * (answers or 1) + body_bytes // BYTES_PER_TOKEN


def _first_int(doc: dict[str, Any], names: tuple[str, ...]) -> int | None:
    """The first of ``names`` that ``doc`` sets to a positive integer.

    Every answer a request asks for costs its output: ``n`` and ``candidateCount``
    multiply the cap.
    """
    for name in names:
        value = doc.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


@dataclass
class Reservation:
    """Tokens held for one request until its answer is metered."""

    ledger: str
    tokens: int
    settled: bool = False
    """Settled already: a second settlement changes nothing."""


@dataclass
class _Tally:
    spent: int
    reserved: int = 0


@dataclass
class Budgets:
    """Spent and reserved tokens per attempt (per ledger file), in this process."""

    _tallies: dict[str, _Tally] = field(default_factory=dict)

    def _tally(self, ledger: str) -> _Tally:
        if ledger not in self._tallies:
            spent = sum(e.charged for e in read_entries(Path(ledger)))
            self._tallies[ledger] = _Tally(spent)
        return self._tallies[ledger]

    def reserve(self, ledger: str, budget: int, tokens: int) -> Reservation | None:
        """Hold ``tokens``, or ``None`` when spent and held already reach ``budget``."""
        tally = self._tally(ledger)
        if tally.spent + tally.reserved >= budget:
            return None
        tally.reserved += tokens
        return Reservation(ledger, tokens)

    def held(self, ledger: str) -> tuple[int, int]:
        """``(spent, reserved)`` for the attempt."""
        tally = self._tally(ledger)
        return tally.spent, tally.reserved

    def settle(self, reservation: Reservation | None, charged: int) -> None:
        """Release the reservation (once; none: nothing); ``charged`` tokens are spent instead."""
        if reservation is None or reservation.settled:
            return
        reservation.settled = True
        tally = self._tally(reservation.ledger)
        tally.reserved = max(0, tally.reserved - reservation.tokens)
        tally.spent += charged
