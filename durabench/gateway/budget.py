"""An attempt's token budget, held before a request goes out rather than checked after.

Each priced request reserves its worst case (:func:`worst_case`: the output it may ask
for, its input estimated from its size, and what each use of a server tool it allows may
add: a web search with ``max_tokens`` 1 was billed ~3,000 tokens) while spent and
reserved tokens are still under the budget; the reservation is settled with what the
API reported once its answer ends. So concurrent requests cannot all slip in under a
budget none of them has spent yet, and the attempt's total can pass its budget by at
most one request's worst case.

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

__all__ = [
    "DEFAULT_OUTPUT_RESERVE",
    "DEFAULT_SERVER_TOOL_USES",
    "SERVER_TOOL_USE_TOKENS",
    "Budgets",
    "Reservation",
    "server_tool_uses",
    "worst_case",
]

DEFAULT_OUTPUT_RESERVE = 32_000
"""Output tokens reserved for a request that sets no cap of its own."""
BYTES_PER_TOKEN = 3
"""A request's input is estimated at one token per this many bytes of its body: above
what prose or code takes (about four), so the estimate errs on the side of reserving."""


SERVER_TOOL_USE_TOKENS = 10_000
"""Tokens reserved for each use of a server tool (a search's results enter the input)."""
DEFAULT_SERVER_TOOL_USES = 8
"""Uses reserved for a server tool whose request sets no ``max_uses`` (Claude Code's own
web search allows 8)."""
_CLIENT_TOOL_TYPES = ("function", "custom", "local_shell", "computer_use_preview")
"""Tool types the CLI runs itself: they cost only their text, counted in the body."""
_CLIENT_TOOL_PREFIXES = ("bash_", "text_editor_", "computer_", "memory_")
"""Anthropic's client-run tools by type prefix (versioned: ``bash_20250124``)."""
_GEMINI_SERVER_TOOLS = (
    "googleSearch",
    "google_search",
    "googleSearchRetrieval",
    "google_search_retrieval",
    "codeExecution",
    "code_execution",
    "urlContext",
    "url_context",
)


def worst_case(provider: ProviderName, doc: dict[str, Any], body_bytes: int) -> int:
    """The most tokens ``doc`` can cost: output cap, input and every server-tool use."""
    if provider == "gemini":
        config = doc.get("generationConfig") or doc.get("generation_config")
        config = config if isinstance(config, dict) else {}
        cap = _first_int(config, ("maxOutputTokens", "max_output_tokens"))
        answers = _first_int(config, ("candidateCount", "candidate_count"))
    else:
        cap = _first_int(doc, ("max_tokens", "max_output_tokens", "max_completion_tokens"))
        answers = _first_int(doc, ("n",))
    output = (cap or DEFAULT_OUTPUT_RESERVE) * (answers or 1)
    tools = server_tool_uses(provider, doc) * SERVER_TOOL_USE_TOKENS
    return output + body_bytes // BYTES_PER_TOKEN + tools


def server_tool_uses(provider: ProviderName, doc: dict[str, Any]) -> int:
    """How many times the API may run a tool of its own for ``doc`` (search, fetch, code).

    A tool of an unknown type counts as the API's: over-reserving costs an honest agent
    a smaller share of its budget at once, under-reserving lets a hostile one past it.
    Anthropic's ``mcp_servers`` (the API calling MCP servers itself) count alike.
    """
    tools = doc.get("tools")
    uses = 0
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if provider == "gemini":
            uses += DEFAULT_SERVER_TOOL_USES * sum(name in tool for name in _GEMINI_SERVER_TOOLS)
            continue
        kind = tool.get("type")
        if not isinstance(kind, str) or kind in _CLIENT_TOOL_TYPES:
            continue
        if not kind.startswith(_CLIENT_TOOL_PREFIXES):
            uses += _first_int(tool, ("max_uses",)) or DEFAULT_SERVER_TOOL_USES
    servers = doc.get("mcp_servers")
    if isinstance(servers, list):
        uses += DEFAULT_SERVER_TOOL_USES * len(servers)
    return uses


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
