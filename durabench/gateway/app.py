"""The gateway itself: a streaming pass-through from sandboxes to the model APIs.

A plain ASGI app (served by uvicorn) over one ``httpx.AsyncClient``: each request's
placeholder key is looked up, swapped for the real key, and the request forwarded; the
response streams back to the agent byte for byte while :class:`ResponseMeter` reads its
usage, and one ledger line records it. The gateway holds no state of its own: grants and
ledgers are files, so a restarted worker's gateway carries on where the last one stopped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode

import httpx

from durabench.gateway.grants import Grant, GrantStore
from durabench.gateway.ledger import LedgerEntry, append_entry, read_ledger
from durabench.gateway.meter import ResponseMeter, ResponseUsage
from durabench.gateway.providers import PROVIDERS, ProviderName, client_key, outgoing_headers

__all__ = ["GatewayApp", "McpResolver", "SecretResolver"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
SecretResolver = Callable[[Grant], tuple[str, str]]
"""The real key behind a grant: ``(variable, value)``; raises ``LookupError`` when this
host has none."""
McpResolver = Callable[[Grant], tuple[str, str]]
"""The lane's MCP endpoint and token on this host: ``(url, token)``; raises
``LookupError`` when a variable is unset."""

MAX_REQUEST_BYTES = 32 << 20
"""A request body past this is refused: no model request is that large."""
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}
_RESETS = ("anthropic-ratelimit-", "x-ratelimit-reset")


class GatewayApp:
    """Forwards ``/<provider>/<path>`` to the provider's upstream with the real key."""

    def __init__(
        self,
        store: GrantStore,
        resolve: SecretResolver,
        resolve_mcp: McpResolver,
        upstreams: Mapping[ProviderName, str],
        client: httpx.AsyncClient,
    ) -> None:
        self.store = store
        self.resolve = resolve
        self.resolve_mcp = resolve_mcp
        self.upstreams = upstreams
        self.client = client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One request: ``/healthz``, ``/mcp/...`` or ``/<provider>/...``."""
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path == "/healthz":
            await _reply(send, 200, {"gateway": "durabench"})
            return
        provider, _, rest = path.lstrip("/").partition("/")
        if provider == "mcp":
            await self._mcp(scope, receive, send, "/" + rest if rest else "")
            return
        if provider not in PROVIDERS:
            await _reply(send, 404, _error("not_found", f"no model API at /{provider}"))
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        grant = self.store.find(client_key(headers, query))
        if grant is None or grant.provider != provider:
            await _reply(
                send,
                401,
                _error(
                    "authentication_error",
                    "durabench gateway: this key is good for no running attempt",
                ),
            )
            return
        body = await _body(receive)
        if body is None:
            await _reply(send, 413, _error("request_too_large", "request body too large"))
            return
        if not PROVIDERS[grant.provider].passes("/" + rest):
            message = f"durabench gateway: /{rest[:80]} is not a model endpoint it passes on"
            await _reply(send, 403, _error("permission_error", message))
            return
        request = _Request(grant.provider, "/" + rest, scope["method"], headers, query, body)
        await self._forward(grant, grant.provider, request, send)

    async def _mcp(self, scope: Scope, receive: Receive, send: Send, rest: str) -> None:
        """The lane's MCP server over HTTP: the placeholder in its auth header swapped."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        grant = None
        for value in headers.values():
            words = value.split()
            if words and (found := self.store.find(words[-1])) and found.mcp is not None:
                grant = found
                break
        if grant is None or grant.mcp is None:
            await _reply(send, 401, _error("authentication_error", "no MCP server for this key"))
            return
        server = grant.mcp
        if not rest.startswith(server.url_suffix) or ".." in rest:
            message = f"durabench gateway: {rest[:80]} is not the MCP server's endpoint"
            await _reply(send, 403, _error("permission_error", message))
            return
        try:
            url, token = self.resolve_mcp(grant)
        except LookupError as exc:
            await _reply(send, 503, _error("api_error", f"durabench gateway: {exc}"))
            return
        body = await _body(receive)
        if body is None:
            await _reply(send, 413, _error("request_too_large", "request body too large"))
            return
        query = scope.get("query_string", b"").decode("latin-1")
        out = {
            k: v
            for k, v in headers.items()
            if k not in {"host", "content-length", "connection", server.auth_header.lower()}
        }
        out[server.auth_header] = f"{server.auth_scheme} {token}".strip()
        out["accept-encoding"] = "identity"
        req = _Request("mcp", rest, scope["method"], headers, {}, body)
        target = url.rstrip("/") + rest + (f"?{query}" if query else "")
        await self._stream(
            grant,
            req,
            self.client.build_request(req.method, target, headers=out, content=body),
            send,
        )

    async def _forward(
        self, grant: Grant, provider: ProviderName, req: _Request, send: Send
    ) -> None:
        started = time.time()
        ledger = Path(grant.ledger)
        refused = self._refusal(grant, ledger)
        if refused:
            status, reason, message = refused
            await _reply(send, status, _error("invalid_request_error", message))
            append_entry(ledger, req.entry(started, status, refused=reason))
            return
        try:
            variable, secret = self.resolve(grant)
        except LookupError as exc:
            await _reply(send, 503, _error("api_error", f"durabench gateway: {exc}"))
            append_entry(ledger, req.entry(started, 503, refused="no key on this host"))
            return
        query = urlencode([(k, v) for k, v in req.query.items() if k != "key"])
        url = self.upstreams[provider].rstrip("/") + req.path + (f"?{query}" if query else "")
        out = outgoing_headers(req.headers, provider, variable, secret)
        out["accept-encoding"] = "identity"  # bytes pass through as the API sent them
        upstream = self.client.build_request(req.method, url, headers=out, content=req.body)
        await self._stream(grant, req, upstream, send)

    async def _stream(
        self, grant: Grant, req: _Request, upstream: httpx.Request, send: Send
    ) -> None:
        """Send ``upstream``; stream its answer to the agent, metered; record it."""
        started, ledger = time.time(), Path(grant.ledger)
        try:
            response = await self.client.send(upstream, stream=True)
        except httpx.HTTPError as exc:
            message = (
                f"durabench gateway could not reach the {req.provider} API: {type(exc).__name__}"
            )
            await _reply(send, 502, _error("api_error", message))
            append_entry(ledger, req.entry(started, 502, refused="upstream unreachable"))
            return
        meter = (
            ResponseMeter(req.provider, response.headers.get("content-type", ""))
            if req.provider != "mcp"
            else None
        )
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": [
                        (k.encode("latin-1"), v.encode("latin-1"))
                        for k, v in response.headers.multi_items()
                        if k.lower() not in _HOP
                    ],
                }
            )
            async for chunk in response.aiter_raw():
                if meter is not None:
                    meter.feed(chunk)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        except httpx.HTTPError:
            pass  # the stream was cut: the agent sees it end; the ledger says what came
        finally:
            await response.aclose()
            append_entry(
                ledger,
                req.entry(
                    started,
                    response.status_code,
                    usage=meter.usage() if meter is not None else ResponseUsage(),
                    retry_after=response.headers.get("retry-after", ""),
                    resets={
                        k: v for k, v in response.headers.items() if k.lower().startswith(_RESETS)
                    },
                ),
            )

    def _refusal(self, grant: Grant, ledger: Path) -> tuple[int, str, str] | None:
        if grant.budget_tokens is None:
            return None
        used = read_ledger(ledger)
        if used is None:
            return None
        total = used.tokens.total
        if total < grant.budget_tokens:
            return None
        return (
            400,
            "budget",
            f"durabench: this attempt's budget of {grant.budget_tokens:,} tokens is spent "
            f"({total:,} used); the attempt ends here",
        )


class _Request:
    """One agent request, as read."""

    def __init__(
        self,
        provider: ProviderName | Literal["mcp"],
        path: str,
        method: str,
        headers: dict[str, str],
        query: dict[str, str],
        body: bytes,
    ) -> None:
        self.provider, self.path, self.method = provider, path, method
        self.headers, self.query, self.body = headers, query, body

    def asked_model(self) -> str:
        """The model the body names (Gemini names it in the path)."""
        try:
            doc = json.loads(self.body) if self.body else {}
        except ValueError:
            doc = {}
        model = doc.get("model") if isinstance(doc, dict) else None
        if isinstance(model, str):
            return model[:200]
        if "/models/" in self.path:
            return self.path.split("/models/", 1)[1].split(":", 1)[0][:200]
        return ""

    def entry(self, started: float, status: int, **fields: Any) -> LedgerEntry:
        now = time.time()
        fields.setdefault("usage", ResponseUsage())
        return LedgerEntry(
            at=now,
            provider=self.provider,
            path=self.path[:500],
            status=status,
            asked_model=self.asked_model(),
            seconds=round(now - started, 3),
            **fields,
        )


def _error(kind: str, message: str) -> dict[str, Any]:
    """An error body every CLI shows: Anthropic's shape, with OpenAI's ``message`` too."""
    return {"type": "error", "error": {"type": kind, "message": message}}


async def _body(receive: Receive) -> bytes | None:
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _reply(send: Send, status: int, doc: Mapping[str, Any]) -> None:
    data = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
