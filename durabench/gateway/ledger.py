"""The gateway's record of an attempt's model requests: one JSON line each, on the host.

It is written by the gateway, outside the sandbox, from what the API answered, so it is
the attempt's meter of record: tokens, the models that served it, and the rate limits and
overloads it met. It holds no key, no prompt and no query string. Appends from several
gateways (a restarted worker's) go to the same file; a line cut by a crash is skipped.

The gateway's own refusals of what the agent asked for (a path or a model it does not
pass on, a spent budget, an oversized body) are the agent's doing: they are counted apart
and never read as the API's answers, so an agent cannot make its attempt look refused by
the API (``infra_auth``, a rate limit) by asking for something the gateway refuses.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from durabench.agents.llm_ids import served_model_matches
from durabench.gateway.allowlist import ROUTES
from durabench.gateway.mcp_answer import HEALTH_METHODS
from durabench.gateway.meter import ResponseUsage
from durabench.models.verdict import MeteredUsage, ModelTokens, TokenUsage

__all__ = [
    "CANCELLED",
    "GATEWAY_ERROR",
    "INCOMPLETE",
    "MALFORMED",
    "OVERLOADED",
    "POLICY_REFUSALS",
    "RATE_SHARE",
    "UPSTREAM_CUT",
    "LedgerEntry",
    "append_entry",
    "costs_whole_hold",
    "read_entries",
    "read_ledger",
]

MALFORMED = "malformed"
"""``refused`` of a request ambiguous about where it ends, or with a body where its method
carries none: a smuggling attempt, the agent's."""
INCOMPLETE = "incomplete"
"""``refused`` of a request whose body never arrived whole (the agent hung up or stalled)."""
CANCELLED = "cancelled"
"""``refused`` of a request still in flight well after its attempt ended (its grant
revoked): cut by the gateway, charged its whole reservation."""
GATEWAY_ERROR = "gateway error"
"""``refused`` of a request the gateway failed on its own: logged, and counted as the
agent's, since only the agent's bytes reach that code (a free retry otherwise)."""
RATE_SHARE = "rate share"
"""``refused`` of a request past its attempt's share of the account's rate limit
(:mod:`.rate_share`): a 429 of the gateway's own, the agent's."""
POLICY_REFUSALS = frozenset(
    {"path", "model", "budget", "size", MALFORMED, INCOMPLETE, CANCELLED, GATEWAY_ERROR, RATE_SHARE}
)
"""``refused`` values the agent's own request caused; any other refusal (no key on this
host, the API unreachable) is the host's."""
UPSTREAM_CUT = "upstream cut"
"""``refused`` of an answer the API began (2xx) and never ended: the host's failure."""
OVERLOADED = "gateway overloaded"
"""``refused`` of a request turned away because the host's gateway held its most requests
in flight: other attempts' doing (one attempt holds at most its own share), the host's."""


def costs_whole_hold(status: int, refused: str, metered: int) -> bool:
    """Whether an answer may have been billed past its meter, so it costs its whole hold.

    Cut short (``cancelled`` by the gateway, or an ``upstream cut`` the host lost) the API
    goes on writing, and billing, an answer nobody meters; a success that reported no usage
    (``metered`` tokens or dollars 0) is billed all the same. The token budget and the
    spend cap charge by this one rule.
    """
    return refused in (CANCELLED, UPSTREAM_CUT) or (200 <= status < 300 and not metered)


class LedgerEntry(BaseModel):
    """One request through the gateway."""

    model_config = ConfigDict(frozen=True)

    at: float
    """When it was answered (Unix time)."""
    provider: str
    path: str
    """The API path, without the query string."""
    status: int
    """The status the agent got (the API's, or the gateway's own refusal)."""
    asked_model: str = ""
    """The model the request named."""
    usage: ResponseUsage = Field(default_factory=ResponseUsage)
    retry_after: str = ""
    """The API's ``retry-after`` header, when it sent one."""
    resets: dict[str, str] = Field(default_factory=dict)
    """The API's rate-limit reset headers, by name."""
    refused: str = ""
    """Why the gateway itself refused the request: one of :data:`POLICY_REFUSALS`, or
    the host's trouble (``upstream unreachable``, ``no key on this host``)."""
    charged: int = 0
    """Tokens charged to the attempt's budget: the usage the API reported, or the
    request's whole reservation when the answer may have been billed past it
    (:func:`costs_whole_hold`)."""
    seconds: float = 0.0
    """From the request to the end of the response."""
    rpc_method: str = ""
    """The JSON-RPC method an MCP request called; ``""`` when it made no single call (or
    was no MCP request)."""
    rate_share: int = 0
    """The attempt's share of its account's requests a minute when the request was placed
    or answered (the account's limit, as the API's headers state it, over the attempts on
    it); 0: no limit known."""
    beyond_share: bool = False
    """The request was past that share: refused by the gateway (``rate share``), or sent
    before the limit was known and found past it when an answer stated it."""
    rpc_result: bool = False
    """Whether the MCP server answered that call with a JSON-RPC result: its own word that
    it serves MCP, which an HTTP status is not (a web page answers 200)."""


def append_entry(path: Path, entry: LedgerEntry) -> None:
    """Add one line; the directory exists (it is the attempt's)."""
    with path.open("a", encoding="utf-8") as f:
        f.write(entry.model_dump_json() + "\n")


def read_entries(path: Path) -> list[LedgerEntry]:
    """Every whole line of the ledger (none when there is no file yet)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    entries = []
    for line in lines:
        try:
            entries.append(LedgerEntry.model_validate_json(line))
        except (ValidationError, ValueError):
            continue
    return entries


def _billed(entry: LedgerEntry) -> bool:
    """Whether ``entry`` is a request to an endpoint a model answers with tokens."""
    routes = ROUTES.get(entry.provider, ())  # type: ignore[call-overload]
    return any(r.priced and r.pattern.fullmatch(entry.path) for r in routes)


def _kinds(usage: ResponseUsage) -> dict[str, int]:
    """The tokens of each kind an answer reported."""
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
    }


def read_ledger(path: Path) -> MeteredUsage | None:
    """The attempt's totals, or ``None`` when no request went through the gateway."""
    entries = read_entries(path)
    if not entries:
        return None
    mcp = [e for e in entries if e.provider == "mcp"]
    entries = [e for e in entries if e.provider != "mcp"]
    answered = [e for e in entries if e.refused not in POLICY_REFUSALS]
    tokens = Counter[str]()
    by_model: dict[tuple[str, str], Counter[str]] = {}
    served = Counter[str]()
    asked = Counter(e.asked_model for e in entries if e.asked_model)
    substituted = next(
        (
            f"{e.asked_model}, served {e.usage.model}"
            for e in entries
            if e.asked_model
            and e.usage.model
            and not served_model_matches(e.asked_model, e.usage.model)
        ),
        "",
    )
    for e in entries:
        counted = _kinds(e.usage)
        tokens.update(counted)
        model = by_model.setdefault((e.provider, e.asked_model or e.usage.model), Counter())
        model.update(counted)
        if e.usage.model:
            served[e.usage.model] += e.usage.output or 1
    api = [e for e in answered if not e.refused]
    last = answered[-1] if answered else LedgerEntry(at=0, provider="", path="", status=0)
    first_beyond = next((i for i, e in enumerate(entries) if e.beyond_share), None)
    last_at = max((i for i, e in enumerate(entries) if e is last), default=-1)
    return MeteredUsage(
        requests=len(entries),
        tokens=TokenUsage(**tokens),
        unmetered=sum(
            not e.refused
            and 200 <= e.status < 300
            and _billed(e)
            and not any(_kinds(e.usage).values())
            for e in entries
        ),
        by_model=tuple(
            ModelTokens(provider=provider, model=model, tokens=TokenUsage(**counted))
            for (provider, model), counted in by_model.items()
        ),
        served_models=tuple(m for m, _ in served.most_common()),
        rate_limited=sum(e.status == 429 for e in api),
        overloaded=sum(e.status == 529 or e.usage.error == "overloaded_error" for e in api),
        auth_refused=sum(e.status in (401, 403) for e in api),
        budget_spent=any(e.refused == "budget" for e in entries),
        spend_capped=any(e.refused == "spend cap" for e in entries),
        refused_path=sum(e.refused == "path" for e in entries),
        refused_model=sum(e.refused == "model" for e in entries),
        last_status=last.status,
        last_error=last.usage.error or last.refused,
        last_refused=entries[-1].refused if entries else "",
        last_retry_after=last.retry_after,
        last_resets=json.dumps(last.resets, sort_keys=True) if last.resets else "",
        asked_models=tuple(m for m, _ in asked.most_common()),
        substituted=substituted,
        beyond_share=sum(e.beyond_share for e in entries),
        share_passed_by_last=first_beyond is not None and first_beyond <= last_at,
        mcp_requests=len(mcp),
        mcp_answered=sum(e.rpc_result and e.rpc_method in HEALTH_METHODS for e in mcp),
        mcp_http_ok=sum(200 <= e.status < 300 for e in mcp),
    )
