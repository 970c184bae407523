"""Which requests the gateway passes on: per provider, a method and an exact path shape each.

The real key can do far more than a coding session needs (batches, files, fine-tunes,
stored completions, admin APIs), and each of those would spend it where the meter cannot
see or reach data that is not the attempt's. So the gateway passes on only what the three
CLIs send (``tests/integration/test_real_*.py`` run them through it):

- Anthropic: ``POST /v1/messages``, ``POST /v1/messages/count_tokens``,
  ``GET /v1/models`` and ``GET /v1/models/<id>``;
- OpenAI: ``POST /v1/responses``, ``POST /v1/chat/completions``, ``GET /v1/models``;
- Gemini: ``POST /v1beta/models/<model>:generateContent`` (and ``streamGenerateContent``,
  ``countTokens``), ``GET /v1beta/models`` and ``GET /v1beta/models/<model>`` (``/v1``
  alike);
- MCP: ``POST``, ``GET`` and ``DELETE`` on the lane's endpoint exactly (streamable HTTP).

The raw path is checked before anything decodes it: a dot segment, a percent escape, a
backslash, a double slash or a byte outside printable ASCII is refused outright, so the
path that matched is the very path sent upstream (nothing downstream can normalise it
into another one). To pass another endpoint, add its pattern to :data:`ROUTES`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from durabench.gateway.providers import ProviderName

__all__ = ["MCP_METHODS", "QUERY", "ROUTES", "Route", "allowed", "path_fault", "query_fault"]


class Route(NamedTuple):
    """One endpoint the gateway passes on."""

    method: str
    pattern: re.Pattern[str]
    """The whole path (no query string) must match."""
    priced: bool
    """Whether a model answers it with tokens (and so it names a model and is budgeted)."""


_ID = r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}"
"""A model id as a path segment: no separator, no colon, no escape."""


def _route(method: str, pattern: str, *, priced: bool = False) -> Route:
    return Route(method, re.compile(pattern), priced)


ROUTES: Mapping[ProviderName, tuple[Route, ...]] = {
    "anthropic": (
        _route("POST", r"/v1/messages", priced=True),
        _route("POST", r"/v1/messages/count_tokens"),
        _route("GET", r"/v1/models"),
        _route("GET", rf"/v1/models/{_ID}"),
    ),
    "openai": (
        _route("POST", r"/v1/responses", priced=True),
        _route("POST", r"/v1/chat/completions", priced=True),
        _route("GET", r"/v1/models"),
    ),
    "gemini": (
        _route(
            "POST", rf"/v1(beta)?/models/{_ID}:(generateContent|streamGenerateContent)", priced=True
        ),
        _route("POST", rf"/v1(beta)?/models/{_ID}:countTokens"),
        _route("GET", r"/v1(beta)?/models"),
        _route("GET", rf"/v1(beta)?/models/{_ID}"),
    ),
}
"""Every endpoint passed on, per provider; anything else is refused with 403."""

QUERY: Mapping[ProviderName, Mapping[str, frozenset[str] | None]] = {
    "anthropic": {"beta": frozenset({"true"})},
    "openai": {},
    "gemini": {
        "alt": frozenset({"sse"}),
        "key": None,
        "pageSize": None,
        "pageToken": None,
    },
}
"""Query parameters passed on, per provider, and their allowed values (``None``: any).

An API reads its query as part of the request: Gemini's ``fields=`` strips the usage and
the end of an answer from what the meter sees, ``alt=proto`` makes it unreadable. So
only what the CLIs send passes (Claude Code's ``beta=true``, Gemini's ``alt=sse``, its
key, which is replaced, and the model list's paging)."""

MCP_METHODS = frozenset({"POST", "GET", "DELETE"})
"""What streamable HTTP uses on an MCP endpoint: JSON-RPC, its event stream, session end."""

_PRINTABLE = re.compile(r"[\x21-\x7e]*")


def path_fault(raw_path: str) -> str:
    """Why ``raw_path`` (as it came, undecoded) cannot be matched safely, or ``""``."""
    if not raw_path.startswith("/") or not _PRINTABLE.fullmatch(raw_path):
        return "it is not a plain absolute path of printable ASCII"
    if "%" in raw_path:
        return "it holds a percent escape"
    if "\\" in raw_path:
        return "it holds a backslash"
    if "//" in raw_path:
        return "it holds an empty segment (//)"
    if any(segment in (".", "..") for segment in raw_path.split("/")):
        return "it holds a dot segment"
    return ""


def allowed(provider: ProviderName, method: str, path: str) -> Route | None:
    """The route ``method path`` matches, or ``None`` when the gateway refuses it."""
    for route in ROUTES[provider]:
        if route.method == method and route.pattern.fullmatch(path):
            return route
    return None


def query_fault(provider: ProviderName, query: list[tuple[str, str]]) -> str:
    """Why ``query`` cannot be passed on to ``provider``'s API, or ``""``."""
    allowed_here = QUERY[provider]
    for name, value in query:
        if name not in allowed_here:
            return f"its query names {name[:40]!r}, which the gateway does not pass on"
        values = allowed_here[name]
        if values is not None and value not in values:
            return f"its query sets {name}={value[:40]!r}, which the gateway does not pass on"
    return ""
