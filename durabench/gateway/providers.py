"""The model APIs the gateway speaks: where each lives, and how keys come in and go out.

An agent CLI is pointed at ``http://<gateway>/<provider>/...`` with a per-attempt
placeholder key in the variable it would read its real key from. The gateway takes the
placeholder from whichever header that CLI sends it in, and sends the real key upstream in
the form the real key's variable calls for (an API key header, or an OAuth bearer token).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from durabench.gateway.headers import forwarded
from durabench.models.config import ModelApi

__all__ = [
    "PROVIDERS",
    "TOKEN_PREFIX",
    "Provider",
    "ProviderName",
    "auth_headers",
    "client_key",
    "mcp_key",
    "route_of",
]

ProviderName = ModelApi
TOKEN_PREFIX = "dbgw-"
"""Placeholder keys start so: one seen anywhere is recognisable as no real key."""


@dataclass(frozen=True)
class Provider:
    """One model API."""

    name: ProviderName
    default_upstream: str
    """Where its requests go unless the worker names another (``upstream_env``)."""
    upstream_env: str
    """The worker's variable naming another upstream (a company proxy, a test server)."""
    base_path: str
    """What the agent's base URL ends in after the gateway's ``/<name>`` (``/v1`` for
    OpenAI clients, which expect the version in the base URL). What it passes on is
    :mod:`durabench.gateway.allowlist`'s."""

    def upstream(self, environ: Mapping[str, str]) -> str:
        """Where requests go: the worker's ``upstream_env``, else the API itself.

        The agent's paths carry ``base_path`` already, so a worker's URL that ends in it
        (``OPENAI_BASE_URL=https://proxy/v1``, as OpenAI clients expect) loses it here.
        """
        url = (environ.get(self.upstream_env) or self.default_upstream).rstrip("/")
        return url.removesuffix(self.base_path) if self.base_path else url


PROVIDERS: Mapping[ProviderName, Provider] = {
    "anthropic": Provider(
        "anthropic",
        "https://api.anthropic.com",
        "ANTHROPIC_BASE_URL",
        base_path="",
    ),
    "openai": Provider(
        "openai",
        "https://api.openai.com",
        "OPENAI_BASE_URL",
        base_path="/v1",
    ),
    "gemini": Provider(
        "gemini",
        "https://generativelanguage.googleapis.com",
        "GOOGLE_GEMINI_BASE_URL",
        base_path="",
    ),
}

OAUTH_BETA = "oauth-2025-04-20"
"""The ``anthropic-beta`` flag Anthropic's API requires with an OAuth bearer token."""


def client_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str:
    """The key the client sent: from an API-key header, a bearer token or ``?key=``."""
    for name in ("x-api-key", "x-goog-api-key"):
        if headers.get(name):
            return headers[name].strip()
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return query.get("key", "").strip()


def route_of(raw_path: str) -> tuple[str, str]:
    """Which API a request is for (a provider's name, or ``mcp``) and the path past it.

    Read from the path as sent, undecoded, by the app and by its request limit alike.
    """
    first, _, rest = raw_path.partition("?")[0].lstrip("/").partition("/")
    return first, "/" + rest


def mcp_key(headers: Mapping[str, str]) -> str:
    """The placeholder an MCP request carries: the last word of its first header that holds one.

    MCP servers name their auth header as they like, so any header may carry it. The
    gateway's request limit and its MCP route both take the key from here: a request
    that named one attempt to the limit and another to the route would escape the limit.
    """
    for value in headers.values():
        words = value.split()
        if words and words[-1].startswith(TOKEN_PREFIX):
            return words[-1]
    return ""


def auth_headers(provider: ProviderName, variable: str, secret: str) -> dict[str, str]:
    """The headers that carry ``secret`` upstream, as the variable it came from calls for.

    ``CLAUDE_CODE_OAUTH_TOKEN`` is an OAuth token (a bearer, with Anthropic's OAuth beta
    flag); Anthropic keys go in ``x-api-key``, Gemini keys in ``x-goog-api-key``, OpenAI
    keys as a bearer.
    """
    if provider == "anthropic":
        if variable == "CLAUDE_CODE_OAUTH_TOKEN":
            return {"authorization": f"Bearer {secret}", "anthropic-beta": OAUTH_BETA}
        return {"x-api-key": secret}
    if provider == "gemini":
        return {"x-goog-api-key": secret}
    return {"authorization": f"Bearer {secret}"}


def outgoing_headers(
    headers: Mapping[str, str], provider: ProviderName, variable: str, secret: str
) -> dict[str, str]:
    """The client's headers on the allow-list (:mod:`.headers`), with the real key added.

    An ``anthropic-beta`` the client sent is kept, the OAuth flag added to it when needed.
    """
    out = forwarded(headers)
    auth = auth_headers(provider, variable, secret)
    beta = auth.pop("anthropic-beta", "")
    if beta:
        flags = [f.strip() for f in out.get("anthropic-beta", "").split(",") if f.strip()]
        out["anthropic-beta"] = ",".join([*flags, *([beta] if beta not in flags else [])])
    return out | auth
