"""The gateway's record of an attempt's model requests: one JSON line each, on the host.

It is written by the gateway, outside the sandbox, from what the API answered, so it is
the attempt's meter of record: tokens, the models that served it, and the rate limits and
overloads it met. It holds no key, no prompt and no query string. Appends from several
gateways (a restarted worker's) go to the same file; a line cut by a crash is skipped.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from durabench.agents.llm_ids import served_model_matches
from durabench.gateway.meter import ResponseUsage
from durabench.models.verdict import MeteredUsage, TokenUsage

__all__ = ["LedgerEntry", "append_entry", "read_ledger"]


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
    """Why the gateway itself refused the request (budget spent, upstream unreachable)."""
    seconds: float = 0.0
    """From the request to the end of the response."""


def append_entry(path: Path, entry: LedgerEntry) -> None:
    """Add one line; the directory exists (it is the attempt's)."""
    with path.open("a", encoding="utf-8") as f:
        f.write(entry.model_dump_json() + "\n")


def read_ledger(path: Path) -> MeteredUsage | None:
    """The attempt's totals, or ``None`` when no request went through the gateway."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    entries = []
    for line in lines:
        try:
            entries.append(LedgerEntry.model_validate_json(line))
        except (ValidationError, ValueError):
            continue
    if not entries:
        return None
    mcp = [e for e in entries if e.provider == "mcp"]
    entries = [e for e in entries if e.provider != "mcp"]
    tokens = Counter[str]()
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
        tokens.update(
            input=e.usage.input,
            output=e.usage.output,
            cache_read=e.usage.cache_read,
            cache_write=e.usage.cache_write,
        )
        if e.usage.model:
            served[e.usage.model] += e.usage.output or 1
    last = entries[-1] if entries else LedgerEntry(at=0, provider="", path="", status=0)
    return MeteredUsage(
        requests=len(entries),
        tokens=TokenUsage(**tokens),
        served_models=tuple(m for m, _ in served.most_common()),
        rate_limited=sum(e.status == 429 and not e.refused for e in entries),
        overloaded=sum(e.status == 529 or e.usage.error == "overloaded_error" for e in entries),
        auth_refused=sum(e.status in (401, 403) for e in entries),
        budget_spent=any(e.refused == "budget" for e in entries),
        last_status=last.status,
        last_error=last.usage.error or last.refused,
        last_refused=last.refused,
        last_retry_after=last.retry_after,
        last_resets=json.dumps(last.resets, sort_keys=True) if last.resets else "",
        asked_models=tuple(m for m, _ in asked.most_common()),
        substituted=substituted,
        mcp_requests=len(mcp),
        mcp_answered=sum(200 <= e.status < 300 for e in mcp),
    )
