"""Claude Code ``--output-format stream-json`` transcripts.

Quirks handled: API errors arrive as assistant turns whose model is ``<synthetic>`` and that
carry ``is_api_error_message`` (or ``isApiErrorMessage``); a ``result`` can say
``subtype: success`` yet ``is_error: true``; ``modelUsage`` breaks tokens and cost down by
model and wins over ``usage`` when present. Before each retry of a failed API request
it prints ``{"type": "system", "subtype": "api_retry", "error_status": 429, "error":
"rate_limit", ...}``; the last one with no model answer after it is the retry the session
ended in. The ``init`` event's ``mcp_servers`` lists each MCP server with its status.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from durabench.agents.numbers import count, dollars
from durabench.agents.transcript import (
    KEPT_ERRORS,
    ErrorText,
    McpServerState,
    TranscriptFacts,
    error_text,
)
from durabench.models.verdict import TokenUsage

__all__ = ["parse_claude"]


def _texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(
        str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
    )


def _is_api_error(event: dict[str, Any], message: dict[str, Any]) -> bool:
    flagged = event.get("is_api_error_message") or event.get("isApiErrorMessage")
    return bool(flagged) or message.get("model") == "<synthetic>"


def _with_codes(text: str, event: dict[str, Any]) -> str:
    codes = [f"{k}={event[k]}" for k in ("error", "api_error_status") if event.get(k) is not None]
    return f"{text} ({', '.join(codes)})" if codes else text


def _retry_text(event: dict[str, Any]) -> str:
    status = event.get("error_status")
    said = f"error_status={status}" if status is not None else "no HTTP status"
    return (
        f"API retry {event.get('attempt', '?')}/{event.get('max_retries', '?')}: "
        f"{event.get('error') or 'unknown error'} ({said})"
    )


def _mcp_report(init: dict[str, Any]) -> tuple[McpServerState, ...] | None:
    servers = init.get("mcp_servers")
    if not isinstance(servers, list):
        return None
    return tuple(
        McpServerState(name=str(s["name"]), status=str(s.get("status", "")))
        for s in servers
        if isinstance(s, dict) and s.get("name") is not None
    )


def _usage(result: dict[str, Any]) -> tuple[TokenUsage, float | None]:
    """Tokens and cost of a ``result`` event; a field that is no plain number is ignored."""
    per_model = result.get("modelUsage")
    cost = dollars(result.get("total_cost_usd"))
    if isinstance(per_model, dict) and per_model:
        rows = [m for m in per_model.values() if isinstance(m, dict)]
        tokens = TokenUsage(
            input=sum(count(m, "inputTokens") for m in rows),
            output=sum(count(m, "outputTokens") for m in rows),
            cache_read=sum(count(m, "cacheReadInputTokens") for m in rows),
            cache_write=sum(count(m, "cacheCreationInputTokens") for m in rows),
        )
        costs = [c for c in (dollars(m.get("costUSD")) for m in rows) if c is not None]
        return tokens, (sum(costs) or cost) if costs else cost
    usage = result.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    tokens = TokenUsage(
        input=count(usage, "input_tokens"),
        output=count(usage, "output_tokens"),
        cache_read=count(usage, "cache_read_input_tokens"),
        cache_write=count(usage, "cache_creation_input_tokens"),
    )
    return tokens, cost


def parse_claude(events: Iterable[dict[str, Any]]) -> TranscriptFacts:
    """Facts of a Claude Code stream-json transcript."""
    served: str | None = None
    errors: deque[ErrorText] = deque(maxlen=KEPT_ERRORS)
    n = 0
    last, errored, retrying = "", False, ""
    tokens, cost = TokenUsage(), None
    mcp: tuple[McpServerState, ...] | None = None
    for n, event in enumerate(events, start=1):
        i = n - 1
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            served = str(event["model"]) if event.get("model") else served
            mcp = _mcp_report(event) if mcp is None else mcp
        elif kind == "system" and event.get("subtype") == "api_retry":
            retrying = _retry_text(event)
        elif kind == "assistant" and isinstance(event.get("message"), dict):
            message, text = event["message"], _texts(event["message"])
            if _is_api_error(event, message):
                errors.append(ErrorText(index=i, text=error_text(_with_codes(text, event))))
                continue
            retrying = ""  # the model answered: that retry succeeded
            if text.strip():
                last = text
        elif kind == "result":
            tokens, cost = _usage(event)
            text = str(event.get("result") or "")
            errored = bool(event.get("is_error")) or str(event.get("subtype", "")).startswith(
                "error"
            )
            if errored:
                errors.append(
                    ErrorText(index=i, text=error_text(text or str(event.get("subtype"))))
                )
                continue
            retrying = ""
            if text.strip():
                last = text
    return TranscriptFacts(
        n_events=n,
        served_model=served,
        errors=tuple(errors),
        errored=errored,
        last_message=last.strip(),
        tokens=tokens,
        cost_usd=cost,
        retrying=retrying,
        mcp_servers=mcp,
    )
