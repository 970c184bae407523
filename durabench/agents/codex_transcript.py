"""Codex CLI ``exec --json`` transcripts.

Tokens come from every ``turn.completed`` (its ``input_tokens`` include the cached ones);
errors from ``error`` events and ``turn.failed``; the last message from the last
``agent_message`` item. Codex names no model in its events unless configured to, so the
served model is often unknown.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from durabench.agents.numbers import count
from durabench.agents.transcript import KEPT_ERRORS, ErrorText, TranscriptFacts, error_text
from durabench.models.verdict import TokenUsage

__all__ = ["parse_codex"]


def _error_message(event: dict[str, Any]) -> str:
    error = event.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))
    return str(event.get("message") or error or "")


def parse_codex(events: Iterable[dict[str, Any]]) -> TranscriptFacts:
    """Facts of a Codex ``exec --json`` transcript."""
    served: str | None = None
    errors: deque[ErrorText] = deque(maxlen=KEPT_ERRORS)
    n = 0
    last, errored = "", False
    fresh = cached = output = 0
    for n, event in enumerate(events, start=1):
        i = n - 1
        kind = event.get("type")
        if served is None and isinstance(event.get("model"), str):
            served = str(event["model"])
        if kind == "item.completed" and isinstance(event.get("item"), dict):
            item = event["item"]
            if item.get("type") == "agent_message" and str(item.get("text", "")).strip():
                last = str(item["text"])
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
            cached += count(usage, "cached_input_tokens")
            fresh += max(count(usage, "input_tokens") - count(usage, "cached_input_tokens"), 0)
            output += count(usage, "output_tokens")
        elif kind in ("error", "turn.failed"):
            errors.append(ErrorText(index=i, text=error_text(_error_message(event))))
            errored = errored or kind == "turn.failed"
    return TranscriptFacts(
        n_events=n,
        served_model=served,
        errors=tuple(errors),
        errored=errored,
        last_message=last.strip(),
        tokens=TokenUsage(input=fresh, output=output, cache_read=cached),
    )
