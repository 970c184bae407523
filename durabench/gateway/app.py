"""The gateway itself: a streaming pass-through from sandboxes to the model APIs, with policy.

A plain ASGI app (served by uvicorn) over one ``httpx.AsyncClient``. Each request's
placeholder key is looked up; then the request must pass, in order: the allow-list of
endpoints (:mod:`.allowlist`, 403), the body limit (:mod:`.request`, 413), the attempt's
model (the requested one or an auxiliary one its CLI needs, 403) and its token budget
(:mod:`.budget`, 400). Only then is the real key swapped in and the request forwarded;
the answer streams back to the agent chunk by chunk while :class:`ResponseMeter` reads its
usage, and one ledger line records it. Every refusal is a ledger line too. Grants and
ledgers are files, so a restarted gateway carries on where the last one stopped.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

from durabench.gateway.allowlist import MCP_METHODS, allowed, path_fault, query_fault
from durabench.gateway.budget import Budgets, Reservation, worst_case
from durabench.gateway.grants import Grant, GrantStore
from durabench.gateway.inflight import InFlight
from durabench.gateway.ledger import OVERLOADED, UPSTREAM_CUT, append_entry
from durabench.gateway.meter import ResponseMeter, ResponseUsage
from durabench.gateway.providers import (
    PROVIDERS,
    ProviderName,
    client_key,
    mcp_key,
    outgoing_headers,
    route_of,
)
from durabench.gateway.request import AgentRequest, BodyTooLarge, Receive, read_body

__all__ = ["GatewayApp", "McpResolver", "SecretResolver"]

Scope = MutableMapping[str, Any]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
SecretResolver = Callable[[Grant], tuple[str, str]]
"""The real key behind a grant: ``(variable, value)``; raises ``LookupError`` when this
host has none."""
McpResolver = Callable[[Grant], tuple[str, str]]
"""The lane's MCP endpoint and token on this host: ``(url, token)``; raises
``LookupError`` when a variable is unset."""

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}
_RESETS = ("anthropic-ratelimit-", "x-ratelimit-reset")


class _Refused(Exception):
    """The gateway answers the request itself: ``status``, ledgered as ``reason``."""

    def __init__(self, status: int, reason: str, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.kind = status, reason, kind


class GatewayApp:
    """Forwards ``/<provider>/<path>`` to the provider's upstream with the real key."""

    def __init__(
        self,
        store: GrantStore,
        resolve: SecretResolver,
        resolve_mcp: McpResolver,
        upstreams: Mapping[ProviderName, str],
        client: httpx.AsyncClient,
        inflight: InFlight | None = None,
    ) -> None:
        """``inflight``: where this process notes what it serves (the gateway process's own)."""
        self.store = store
        self.inflight = inflight
        self.resolve = resolve
        self.resolve_mcp = resolve_mcp
        self.upstreams = upstreams
        self.client = client
        self.budgets = Budgets()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One request: ``/healthz``, ``/mcp/...`` or ``/<provider>/...``."""
        if scope["type"] != "http":
            return
        raw = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        if raw == "/healthz":
            await _reply(send, 200, {"gateway": "durabench"})
            return
        provider, rest = route_of(raw)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if provider == "mcp":
            await self._mcp(scope, receive, send, headers, rest)
            return
        if provider not in PROVIDERS:
            await _reply(send, 404, _error("not_found", f"no model API at /{provider[:80]}"))
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        grant = self.store.find(client_key(headers, dict(query)))
        if grant is None or grant.provider != provider:
            message = "durabench gateway: this key is good for no running attempt"
            await _reply(send, 401, _error("authentication_error", message))
            return
        req = AgentRequest(grant.provider, rest, scope["method"], headers, query)
        reservation = None
        try:
            reservation = await self._admit(grant, req, receive)
            variable, secret = self._secret(grant)
        except _Refused as refusal:
            if reservation is not None:
                self.budgets.settle(reservation, 0)
            await _refuse(send, grant, req, refusal)
            return
        await self._forward(grant, req, send, reservation, (variable, secret))

    def overloaded(self, scope: Scope) -> None:
        """Record that a request was turned away because the host's gateway was full.

        Other attempts' requests filled it (one attempt holds at most its own share), so
        the attempt's ledger says so in the host's words: its failure is infra, retried.
        """
        raw = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        provider, rest = route_of(raw)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        key = mcp_key(headers) if provider == "mcp" else client_key(headers, dict(query))
        grant = self.store.find(key)
        if grant is None:
            return
        ledger = Path(grant.ledger)
        if _last_line(ledger).find(f'"refused":"{OVERLOADED}"') >= 0:
            return  # one line for a run of refusals: a flood while full cannot grow it
        req = AgentRequest(grant.provider, rest, scope["method"], headers, [])
        append_entry(ledger, req.entry(503, refused=OVERLOADED))

    async def _admit(self, grant: Grant, req: AgentRequest, receive: Receive) -> Reservation | None:
        """Pass the request through the policy; its budget reservation, if it has one.

        Raises:
            _Refused: the path, the body, the model or the budget is refused.
        """
        fault = path_fault(req.path) or query_fault(grant.provider, req.query)
        route = None if fault else allowed(grant.provider, req.method, req.path)
        if route is None:
            why = f" ({fault})" if fault else ""
            raise _Refused(
                403,
                "path",
                "permission_error",
                f"durabench gateway: {req.method} {req.path[:120]} is not an endpoint it "
                f"passes on{why}; it passes only the model endpoints a coding CLI calls",
            )
        await _take_body(req, receive)
        asked = req.asked_model()
        if req.method == "POST" and not grant.serves(asked):
            allowed_models = ", ".join((grant.model, *grant.auxiliary_models))
            raise _Refused(
                403,
                "model",
                "permission_error",
                f"durabench gateway: model {asked[:120]!r} is not this attempt's; "
                f"it may use {allowed_models}",
            )
        if not route.priced or grant.budget_tokens is None:
            return None
        worst = worst_case(grant.provider, req.doc, len(req.body))
        reservation = self.budgets.reserve(grant.ledger, grant.budget_tokens, worst)
        if reservation is None:
            spent, held = self.budgets.held(grant.ledger)
            raise _Refused(
                400,
                "budget",
                "invalid_request_error",
                f"durabench: this attempt's budget of {grant.budget_tokens:,} tokens is spent "
                f"({spent:,} used, {held:,} held by requests in flight); the attempt ends here",
            )
        return reservation

    def _secret(self, grant: Grant) -> tuple[str, str]:
        try:
            return self.resolve(grant)
        except LookupError as exc:
            raise _Refused(
                503, "no key on this host", "api_error", f"durabench gateway: {exc}"
            ) from None

    async def _forward(
        self,
        grant: Grant,
        req: AgentRequest,
        send: Send,
        reservation: Reservation | None,
        key: tuple[str, str],
    ) -> None:
        req.force_usage()
        query = urlencode([(k, v) for k, v in req.query if k != "key"])
        base = self.upstreams[grant.provider].rstrip("/")
        url = base + req.path + (f"?{query}" if query else "")
        out = outgoing_headers(req.headers, grant.provider, *key)
        out["accept-encoding"] = "identity"  # bytes pass through as the API sent them
        await self._stream(grant, req, out, url, send, reservation)

    async def _mcp(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], rest: str
    ) -> None:
        """The lane's MCP server over HTTP: its one endpoint, the placeholder swapped."""
        grant = self.store.find(mcp_key(headers))
        if grant is None or grant.mcp is None:
            await _reply(send, 401, _error("authentication_error", "no MCP server for this key"))
            return
        server = grant.mcp
        req = AgentRequest("mcp", rest, scope["method"], headers, [])
        try:
            if path_fault(rest) or rest != (server.url_suffix or "/"):
                message = f"durabench gateway: {rest[:120]} is not the MCP server's endpoint"
                raise _Refused(403, "path", "permission_error", message)
            if req.method not in MCP_METHODS:
                message = f"durabench gateway: {req.method} is not an MCP request"
                raise _Refused(403, "path", "permission_error", message)
            await _take_body(req, receive)
            try:
                url, token = self.resolve_mcp(grant)
            except LookupError as exc:
                raise _Refused(503, "no key on this host", "api_error", str(exc)) from None
        except _Refused as refusal:
            await _refuse(send, grant, req, refusal)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        drop = {"host", "content-length", "connection", server.auth_header.lower()}
        out = {k: v for k, v in headers.items() if k not in drop}
        out[server.auth_header] = f"{server.auth_scheme} {token}".strip()
        out["accept-encoding"] = "identity"
        target = url.rstrip("/") + server.url_suffix + (f"?{query}" if query else "")
        await self._stream(grant, req, out, target, send, None)

    async def _stream(
        self,
        grant: Grant,
        req: AgentRequest,
        headers: dict[str, str],
        url: str,
        send: Send,
        reservation: Reservation | None,
    ) -> None:
        """Send the request; stream its answer to the agent, metered; record it.

        From before it goes out until its ledger line is written it is noted in flight:
        were this process killed meanwhile, the worker writes the line for it.
        """
        headers["content-length"] = str(len(req.body))
        upstream = self.client.build_request(
            req.method, url, headers=headers, content=req.content()
        )
        if not upstream.url.raw_path.partition(b"?")[0].endswith(req.path.encode()):
            if reservation is not None:
                self.budgets.settle(reservation, 0)
            message = "durabench gateway: the path would change on the way out"
            await _refuse(send, grant, req, _Refused(403, "path", "permission_error", message))
            return
        ledger = Path(grant.ledger)
        noted = (
            self.inflight.serving(ledger, grant.provider)
            if self.inflight is not None
            else contextlib.nullcontext()
        )
        with noted:
            await self._exchange(ledger, req, upstream, send, reservation)

    async def _exchange(
        self,
        ledger: Path,
        req: AgentRequest,
        upstream: httpx.Request,
        send: Send,
        reservation: Reservation | None,
    ) -> None:
        """The request to the API and its answer to the agent; the ledger line."""
        try:
            response = await self.client.send(upstream, stream=True)
        except httpx.HTTPError as exc:
            if reservation is not None:
                self.budgets.settle(reservation, 0)
            message = (
                f"durabench gateway could not reach the {req.provider} API: {type(exc).__name__}"
            )
            await _reply(send, 502, _error("api_error", message))
            append_entry(ledger, req.entry(502, refused=upstream_failure(exc)))
            return
        meter = (
            ResponseMeter(req.provider, response.headers.get("content-type", ""))
            if req.provider != "mcp"
            else None
        )
        try:
            await _relay(response, meter, send)
        finally:
            await response.aclose()
            usage = meter.usage() if meter is not None else ResponseUsage()
            cut = (
                meter is not None
                and not (meter.ended or meter.unreadable)
                and 200 <= response.status_code < 300
            )
            charged = _charge(usage, response.status_code, reservation)
            if reservation is not None:
                self.budgets.settle(reservation, charged)
            append_entry(
                ledger,
                req.entry(
                    response.status_code,
                    usage=usage,
                    charged=charged,
                    refused=UPSTREAM_CUT if cut else "",
                    retry_after=response.headers.get("retry-after", ""),
                    resets={
                        k: v for k, v in response.headers.items() if k.lower().startswith(_RESETS)
                    },
                ),
            )


def upstream_failure(exc: httpx.HTTPError) -> str:
    """The ledger's word for a request that got no answer from the API.

    ``upstream unreachable`` (the host's failure) when the connection failed; a timeout
    while sending or waiting is ``upstream timeout``, which is no harness failure: an
    agent can ask for a long answer unstreamed, or send slowly, and wait it out.
    """
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout):
        return "upstream timeout"
    return "upstream unreachable"


async def _relay(response: httpx.Response, meter: ResponseMeter | None, send: Send) -> None:
    """The answer to the agent as it comes, each chunk metered and let go."""
    headers = [
        (k.encode("latin-1"), v.encode("latin-1"))
        for k, v in response.headers.multi_items()
        if k.lower() not in _HOP
    ]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    try:
        async for chunk in response.aiter_raw():
            if meter is not None:
                meter.feed(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    except httpx.HTTPError:
        pass  # the stream was cut: the agent sees it end; the ledger says what came
    await send({"type": "http.response.body", "body": b""})


def _charge(usage: ResponseUsage, status: int, reservation: Reservation | None) -> int:
    """What the request costs the budget.

    The usage reported; else, for a success that reported none (which the API still
    bills), its whole reservation.
    """
    reported = usage.input + usage.output + usage.cache_read + usage.cache_write
    if reported or reservation is None or not 200 <= status < 300:
        return reported
    return reservation.tokens


async def _take_body(req: AgentRequest, receive: Receive) -> None:
    try:
        req.take_body(await read_body(receive, req.headers.get("content-length")))
    except BodyTooLarge:
        raise _Refused(
            413, "size", "request_too_large", "durabench gateway: request body too large"
        ) from None


async def _refuse(send: Send, grant: Grant, req: AgentRequest, refusal: _Refused) -> None:
    await _reply(send, refusal.status, _error(refusal.kind, str(refusal)))
    append_entry(Path(grant.ledger), req.entry(refusal.status, refused=refusal.reason))


def _error(kind: str, message: str) -> dict[str, Any]:
    """An error body every CLI shows: Anthropic's shape, with OpenAI's ``message`` too."""
    return {"type": "error", "error": {"type": kind, "message": message}}


async def _reply(send: Send, status: int, doc: Mapping[str, Any]) -> None:
    data = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _last_line(path: Path) -> str:
    """The ledger's last line ('' when there is none): a line is well under 4 KiB."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - 4096))
            lines = f.read().decode("utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return ""
    return lines[-1] if lines else ""
