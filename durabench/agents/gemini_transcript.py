"""Gemini CLI ``--output-format stream-json`` transcripts.

The ``init`` event names the model; assistant ``message`` events may come as deltas, which
are joined; the final ``result`` carries ``status``, an ``error`` and token ``stats``,
whose ``input_tokens`` count the ``cached`` ones (0.61 also gives the rest as ``input``).
"""

from __future__ import annotations

from typing import Any

from durabench.agents.transcript import ErrorText, TranscriptFacts
from durabench.models.verdict import TokenUsage

__all__ = ["parse_gemini"]


def parse_gemini(events: list[dict[str, Any]]) -> TranscriptFacts:
    """Facts of a Gemini CLI stream-json transcript."""
    served: str | None = None
    errors: list[ErrorText] = []
    last, errored = "", False
    tokens = TokenUsage()
    for i, event in enumerate(events):
        kind = event.get("type")
        if kind == "init" and event.get("model"):
            served = str(event["model"])
        elif kind == "message" and event.get("role") == "assistant":
            text = str(event.get("content") or "")
            last = last + text if event.get("delta") else text
        elif kind == "error":
            errors.append(ErrorText(index=i, text=str(event.get("message", ""))))
        elif kind == "result":
            error = event.get("error")
            errored = event.get("status") == "error"
            if errored:
                message = error.get("message", "") if isinstance(error, dict) else error
                errors.append(ErrorText(index=i, text=str(message or "error")))
            stats = event.get("stats") if isinstance(event.get("stats"), dict) else None
            if stats:
                cached = int(stats.get("cached", 0))
                fresh = stats.get("input", int(stats.get("input_tokens", 0)) - cached)
                tokens = TokenUsage(
                    input=max(int(fresh), 0),
                    output=int(stats.get("output_tokens", 0)),
                    cache_read=cached,
                )
    return TranscriptFacts(
        n_events=len(events),
        served_model=served,
        errors=tuple(errors),
        errored=errored,
        last_message=last.strip(),
        tokens=tokens,
    )
