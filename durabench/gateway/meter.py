"""Reads the usage a model API reports in its own responses, streamed or not.

This is what makes the gateway the meter of record: an agent can rewrite its transcript,
not what the API sent back through the gateway. Each provider reports usage its own way:

- Anthropic: ``usage`` on the message (``message_start``, then cumulative output tokens
  in ``message_delta`` when streamed);
- OpenAI: ``usage`` on the response (``response.completed`` when streamed; input tokens
  count cached ones, which are taken out here) or on a chat completion's last chunk;
- Gemini: ``usageMetadata`` on each chunk, cumulative.

A response is read as server-sent events when it is one, else as JSON (a Gemini stream
without ``alt=sse`` is a JSON array); a body past :data:`MAX_JSON_BYTES` is not parsed.

:attr:`ResponseMeter.ended` says whether the answer reached its end: a stream its closing
event (Anthropic's ``message_stop`` or ``error``, a Responses stream's
``response.completed``/``failed``/``incomplete``, a chat stream's ``[DONE]`` or a
``finish_reason``, a Gemini candidate's ``finishReason``), a JSON body a whole document.
The gateway reads the API's stream to its end even when the agent hangs up, so an answer
that did not end was cut between the gateway and the API: the host's failure.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from durabench.gateway.providers import ProviderName

__all__ = ["MAX_JSON_BYTES", "ResponseMeter", "ResponseUsage"]

MAX_JSON_BYTES = 16 << 20
"""A JSON body larger than this is passed on, not parsed (no usage is read from it)."""
_MAX_LINE = 4 << 20
"""An event line longer than this is skipped: no usage event is that long."""


class ResponseUsage(BaseModel):
    """What one response said about itself."""

    model_config = ConfigDict(frozen=True)

    model: str = ""
    input: int = 0
    """Input tokens, not counting cache reads."""
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    error: str = ""
    """An error type the body named (``overloaded_error``, ``rate_limit_error``)."""


class ResponseMeter:
    """Fed a response body chunk by chunk; :meth:`usage` says what it reported."""

    def __init__(self, provider: ProviderName, content_type: str) -> None:
        self.provider = provider
        self.sse = "text/event-stream" in content_type
        self._buffer = bytearray()
        self._fields: dict[str, Any] = {}
        self._too_big = False
        self.ended = False
        """Whether the answer reached its end (read once :meth:`usage` has been called)."""
        self.unreadable = False
        """Part of the answer was too large to read (a JSON body past the limit, an event
        line past its cap): whether it ended cannot be told, and its size was the request's."""
        self.retry_delay = ""
        """How long a Gemini quota error's ``RetryInfo`` said to wait (``"26s"``), if any."""

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of the body."""
        if self._too_big:
            return
        self._buffer += chunk
        if not self.sse:
            if len(self._buffer) > MAX_JSON_BYTES:
                self._too_big = self.unreadable = True
                self._buffer.clear()
            return
        *lines, rest = self._buffer.split(b"\n")
        if len(rest) > _MAX_LINE:
            self.unreadable = True
        self._buffer = bytearray(rest if len(rest) <= _MAX_LINE else b"")
        for line in lines:
            if line.startswith(b"data:"):
                data = bytes(line[5:]).strip()
                if data == b"[DONE]":
                    self.ended = True
                    continue
                doc = _json(data)
                self.ended = self.ended or _closes(doc)
                self._take(doc)

    def usage(self) -> ResponseUsage:
        """The usage the body reported (what was read of it)."""
        if self.sse:
            self.feed(b"\n")
        elif not self._too_big:
            doc = _json(bytes(self._buffer))
            self.ended = doc is not None
            for item in doc if isinstance(doc, list) else [doc]:
                self._take(item)
        return ResponseUsage.model_validate(self._fields)

    def _take(self, doc: Any) -> None:
        if not isinstance(doc, dict):
            return
        found = {"anthropic": _anthropic, "openai": _openai, "gemini": _gemini}[self.provider](doc)
        if self.provider == "gemini":
            self.retry_delay = _retry_delay(doc) or self.retry_delay
        self._fields |= {k: v for k, v in found.items() if v not in (None, "")}


_CLOSING_TYPES = frozenset(
    {"message_stop", "error", "response.completed", "response.failed", "response.incomplete"}
)
"""Event types after which a stream has nothing more to say."""


def _closes(doc: Any) -> bool:
    """Whether ``doc`` is a stream's closing event (any provider's)."""
    if not isinstance(doc, dict):
        return False
    if doc.get("type") in _CLOSING_TYPES:
        return True
    for key, reason in (("choices", "finish_reason"), ("candidates", "finishReason")):
        items = doc.get(key)
        if isinstance(items, list) and any(isinstance(i, dict) and i.get(reason) for i in items):
            return True
    return False


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _anthropic(doc: dict[str, Any]) -> dict[str, Any]:
    message = doc.get("message") if isinstance(doc.get("message"), dict) else doc
    usage = doc.get("usage") or (message or {}).get("usage") or {}
    error = doc.get("error") if isinstance(doc.get("error"), dict) else {}
    if not isinstance(usage, dict):
        usage = {}
    return {
        "model": (message or {}).get("model") if isinstance(message, dict) else None,
        "input": _int(usage.get("input_tokens")),
        "output": _int(usage.get("output_tokens")),
        "cache_read": _int(usage.get("cache_read_input_tokens")),
        "cache_write": _int(usage.get("cache_creation_input_tokens")),
        "error": str(error.get("type") or "") if error else None,
    }


def _openai(doc: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = doc["response"] if isinstance(doc.get("response"), dict) else doc
    usage = response.get("usage")
    error = response.get("error") if isinstance(response.get("error"), dict) else {}
    found: dict[str, Any] = {
        "model": response.get("model") if isinstance(response.get("model"), str) else None,
        "error": str(error.get("type") or error.get("code") or "") if error else None,
    }
    if isinstance(usage, dict):
        total_in = _int(usage.get("input_tokens", usage.get("prompt_tokens"))) or 0
        details = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
        cached = _int(details.get("cached_tokens") if isinstance(details, dict) else 0) or 0
        found |= {
            "input": max(0, total_in - cached),
            "output": _int(usage.get("output_tokens", usage.get("completion_tokens"))),
            "cache_read": cached,
        }
    return found


def _gemini(doc: dict[str, Any]) -> dict[str, Any]:
    usage = doc.get("usageMetadata")
    error = doc.get("error") if isinstance(doc.get("error"), dict) else {}
    found: dict[str, Any] = {
        "model": doc.get("modelVersion") if isinstance(doc.get("modelVersion"), str) else None,
        "error": str(error.get("status") or error.get("code") or "") if error else None,
    }
    if isinstance(usage, dict):
        prompt = _int(usage.get("promptTokenCount")) or 0
        cached = _int(usage.get("cachedContentTokenCount")) or 0
        out = (_int(usage.get("candidatesTokenCount")) or 0) + (
            _int(usage.get("thoughtsTokenCount")) or 0
        )
        found |= {"input": max(0, prompt - cached), "output": out, "cache_read": cached}
    return found


def _retry_delay(doc: dict[str, Any]) -> str:
    """The ``retryDelay`` of a Gemini error's ``RetryInfo`` detail, as written (bounded)."""
    error = doc.get("error")
    details = error.get("details") if isinstance(error, dict) else None
    for item in details if isinstance(details, list) else ():
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        if isinstance(delay, str) and len(delay) <= 32:
            return delay
    return ""
