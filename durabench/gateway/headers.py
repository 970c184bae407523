"""Which of an agent's request headers go on to the API: an allow-list, never a drop-list.

A header the gateway passes on is read by the API (and by every proxy between): a
``Transfer-Encoding`` or ``Connection`` of the agent's reframes the request upstream, so
that a body hides a second request on a connection another attempt uses next; a
``Forwarded`` or ``X-HTTP-Method-Override`` asks a proxy to do what the gateway refused.
So only headers a coding CLI sends for the API's own semantics pass, by name; framing
(``content-length``) and keys are the gateway's own, set on the way out. To pass another
header a new CLI needs, add its name here (and a test that its CLI sends it).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FORWARDED_EXACT", "FORWARDED_PREFIXES", "forwarded", "is_forwarded"]

FORWARDED_EXACT = frozenset(
    {
        # every client
        "accept",
        "content-type",
        "user-agent",
        "idempotency-key",
        # Claude Code
        "x-app",
        # Codex
        "openai-beta",
        "originator",
        "version",
        "session_id",
        "session-id",
        "conversation_id",
        "conversation-id",
        # Gemini CLI
        "x-goog-api-client",
        # MCP over HTTP (the Streamable HTTP transport)
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
    }
)
"""Header names passed on as they are (lower case, as the gateway reads them)."""
FORWARDED_PREFIXES = ("anthropic-", "x-stainless-", "x-claude-code-", "x-codex-")
"""Families passed on by prefix: Anthropic's API headers (version, beta flags) and the
SDKs' own telemetry (``x-stainless-retry-count`` and the like)."""


def is_forwarded(name: str) -> bool:
    """Whether a request header named ``name`` (lower case) goes on to the API."""
    return name in FORWARDED_EXACT or name.startswith(FORWARDED_PREFIXES)


def forwarded(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers of ``headers`` that go on to the API; the rest are dropped."""
    return {k: v for k, v in headers.items() if is_forwarded(k)}
