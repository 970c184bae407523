"""Gemini CLI ``--output-format stream-json`` transcripts.

The ``init`` event names the model; assistant ``message`` events may come as deltas, which
are joined; the final ``result`` carries ``status``, an ``error`` and token ``stats``,
whose ``input_tokens`` count the ``cached`` ones (0.61 also gives the rest as ``input``).

While it retries a failed model request (0.61, seen against an API answering 429 or 503)
the CLI prints nothing on stdout: the transcript stops at the prompt or a tool result
(``awaiting_model``) and only stderr says ``Attempt N failed with status 429. Retrying
with backoff...`` or, for a quota error whose delay the API named, ``Attempt N failed:
<message>. Retrying after <ms>ms...``; :func:`gemini_retry` reads the last of those.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import Any

from durabench.agents.numbers import count
from durabench.agents.transcript import KEPT_ERRORS, ErrorText, TranscriptFacts, error_text
from durabench.models.verdict import TokenUsage

__all__ = ["gemini_retry", "parse_gemini"]

_RETRY = re.compile(
    r"Attempt (?P<n>\d+) failed(?P<how>.{0,600}?)"
    r"Retrying (?:with backoff|after (?P<ms>\d+)ms)",
    re.DOTALL,
)


def gemini_retry(stderr: str) -> str:
    """The last model-API retry Gemini CLI's stderr announces, or ``""``.

    Worded for the infra patterns: its status, or a rate limit for a quota error's delay.
    """
    found = list(_RETRY.finditer(stderr))
    if not found:
        return ""
    last = found[-1]
    how = " ".join(last["how"].split()).strip(" .:")
    if last["ms"] is not None:  # only a quota error (429) is retried after a delay it names
        return f"API retry {last['n']}: rate limit (quota), again after {last['ms']} ms: {how}"
    return f"API retry {last['n']}: failed {how}".strip()


def parse_gemini(events: Iterable[dict[str, Any]]) -> TranscriptFacts:
    """Facts of a Gemini CLI stream-json transcript."""
    served: str | None = None
    errors: deque[ErrorText] = deque(maxlen=KEPT_ERRORS)
    n = 0
    parts: list[str] = []  # the last answer's deltas, joined once (a flood has millions)
    errored, awaiting = False, False
    tokens = TokenUsage()
    for n, event in enumerate(events, start=1):
        i = n - 1
        kind = event.get("type")
        if kind in ("message", "tool_use", "tool_result", "result"):
            awaiting = kind == "tool_result" or event.get("role") == "user"
        if kind == "init" and event.get("model"):
            served = str(event["model"])
        elif kind == "message" and event.get("role") == "assistant":
            text = str(event.get("content") or "")
            if not event.get("delta"):
                parts = []
            parts.append(text)
        elif kind == "error":
            errors.append(ErrorText(index=i, text=error_text(str(event.get("message", "")))))
        elif kind == "result":
            error = event.get("error")
            errored = event.get("status") == "error"
            if errored:
                message = error.get("message", "") if isinstance(error, dict) else error
                errors.append(ErrorText(index=i, text=error_text(str(message or "error"))))
            stats = event.get("stats") if isinstance(event.get("stats"), dict) else None
            if stats:
                cached = count(stats, "cached")
                fresh = (
                    count(stats, "input")
                    if "input" in stats
                    else max(count(stats, "input_tokens") - cached, 0)
                )
                tokens = TokenUsage(
                    input=fresh, output=count(stats, "output_tokens"), cache_read=cached
                )
    return TranscriptFacts(
        n_events=n,
        served_model=served,
        errors=tuple(errors),
        errored=errored,
        last_message="".join(parts).strip(),
        tokens=tokens,
        awaiting_model=awaiting,
    )
