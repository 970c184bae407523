"""The gateway itself: a streaming pass-through from sandboxes to the model APIs, with policy.

A plain ASGI app (served by uvicorn) over each attempt's own HTTP client
(:mod:`.upstream`). Each request's placeholder key is looked up; then the request must
pass, in order: the allow-list of endpoints (:mod:`.allowlist`, 403), the body's limits
(:mod:`.refusals`, 413), the attempt's model (the requested one or an auxiliary one its
CLI needs, 403) and its token budget (:mod:`.budget`, 400). Only then is the real key
swapped in and the request forwarded with the headers on :mod:`.headers`' allow-list
(:mod:`.exchange`). From the moment its key names an attempt, a request ends in exactly
one ledger line and a settled reservation, whatever fails on the way: a refusal, the
API's answer, or a fault of the gateway's own (``gateway error``, never a 500 with no
line). Grants and ledgers are files, so a restarted gateway carries on where the last
one stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

from durabench.gateway.allowlist import MCP_METHODS, allowed, path_fault, query_fault
from durabench.gateway.budget import Budgets, Reservation, worst_case
from durabench.gateway.exchange import Send, exchange, reply_error
from durabench.gateway.grants import Grant, GrantStore
from durabench.gateway.headers import forwarded
from durabench.gateway.inflight import InFlight
from durabench.gateway.ledger import (
    CANCELLED,
    GATEWAY_ERROR,
)
from durabench.gateway.mcp_answer import rpc_call
from durabench.gateway.providers import (
    PROVIDERS,
    ProviderName,
    client_key,
    mcp_key,
    outgoing_headers,
    route_of,
)
from durabench.gateway.rate_share import LiveAttempts, RateShares
from durabench.gateway.refusals import Refused, place, refuse, take_body
from durabench.gateway.request import (
    AgentRequest,
    BodyBytes,
    Receive,
)
from durabench.gateway.revocation import RevokedRequests
from durabench.gateway.room_book import RoomBook
from durabench.gateway.spend_gate import SpendGate, spend_hold
from durabench.gateway.turned_away import record_malformed, record_overloaded
from durabench.gateway.upstream import UpstreamClients
from durabench.wording import counted

__all__ = ["GatewayApp", "McpResolver", "SecretResolver"]

Scope = MutableMapping[str, Any]
SecretResolver = Callable[[Grant], tuple[str, str]]
"""The real key behind a grant: ``(variable, value)``; raises ``LookupError`` when this
host has none."""
McpResolver = Callable[[Grant], tuple[str, str]]
"""The lane's MCP endpoint and token on this host: ``(url, token)``; raises
``LookupError`` when a variable is unset."""

log = logging.getLogger(__name__)


class GatewayApp:
    """Forwards ``/<provider>/<path>`` to the provider's upstream with the real key."""

    def __init__(
        self,
        store: GrantStore,
        resolve: SecretResolver,
        resolve_mcp: McpResolver,
        upstreams: Mapping[ProviderName, str],
        clients: UpstreamClients,
        inflight: InFlight | None = None,
    ) -> None:
        """Serve ``store``'s grants through ``clients`` (each attempt's own connections).

        ``inflight``: where this process notes what it serves (the gateway process's own).
        """
        self.store = store
        self.inflight = inflight
        self.resolve = resolve
        self.resolve_mcp = resolve_mcp
        self.upstreams = upstreams
        self.clients = clients
        self.budgets = Budgets()
        self.bodies = BodyBytes()
        self.revoked = RevokedRequests(store)
        self.shares = RateShares(LiveAttempts(store))
        self.rooms = RoomBook(store)
        self.spend = SpendGate(store.root)

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
        req = AgentRequest(grant.provider, rest, scope["method"], headers, query, grant.ledger)
        with self.revoked.serving(client_key(headers, dict(query))):
            await self._once(req, send, self._model_request(grant, req, receive, send))

    async def _once(self, req: AgentRequest, send: Send, work: Any) -> None:
        """Run ``work`` (the admitted request); it ends in exactly one ledger line.

        A refusal is answered and ledgered; a fault of the gateway's own is a 500 and a
        ``gateway error`` line, never a 500 with none (its reservation was settled by
        the request's own ``finally``).
        """
        try:
            await work
        except Refused as refusal:
            await refuse(send, req, refusal)
        except asyncio.CancelledError:  # its attempt ended long ago (:mod:`.revocation`)
            req.record(499, refused=CANCELLED)
            raise
        except Exception:
            log.exception("the gateway failed a request to %s", req.path[:120])
            if not req.recorded:
                with contextlib.suppress(Exception):
                    message = "durabench gateway: it failed this request; see its log"
                    await reply_error(send, 500, "api_error", message, close=True)
            req.record(500, refused=GATEWAY_ERROR)
        finally:
            self.bodies.give_back(req.ledger, req.held)

    async def _model_request(
        self, grant: Grant, req: AgentRequest, receive: Receive, send: Send
    ) -> None:
        """Admit the request, then forward it; its reservation is settled on every path."""
        reservation = hold = None
        try:
            reservation = await self._admit(grant, req, receive)
            hold = await spend_hold(self.spend, grant, req)
            key = self._secret(grant)
            await self._forward(grant, req, send, reservation, key)
        finally:
            self.budgets.settle(reservation, 0)  # nothing, when its answer settled it
            if grant.spend is not None:
                self.spend.settle(grant.spend, hold, req.written)

    def overloaded(self, scope: Scope) -> None:
        """Record a request turned away because the host was full (:mod:`.turned_away`)."""
        record_overloaded(self.store, scope)

    def malformed(self, head: bytes, why: str) -> None:
        """Record a request whose head was refused (:mod:`.turned_away`)."""
        record_malformed(self.store, head, why)

    async def _admit(self, grant: Grant, req: AgentRequest, receive: Receive) -> Reservation | None:
        """Pass the request through the policy; its budget reservation, if it has one.

        Raises:
            Refused: the path, the body, the model or the budget is refused.
        """
        fault = path_fault(req.path) or query_fault(grant.provider, req.query)
        route = None if fault else allowed(grant.provider, req.method, req.path)
        if route is None:
            why = f" ({fault})" if fault else ""
            raise Refused(
                403,
                "path",
                "permission_error",
                f"durabench gateway: {req.method} {req.path[:120]} is not an endpoint it "
                f"passes on{why}; it passes only the model endpoints a coding CLI calls",
            )
        await take_body(req, receive, self.bodies, parse=req.method == "POST")
        asked = req.asked_model()
        if req.method == "POST" and not grant.serves(asked):
            allowed_models = ", ".join((grant.model, *grant.auxiliary_models))
            raise Refused(
                403,
                "model",
                "permission_error",
                f"durabench gateway: model {asked[:120]!r} is not this attempt's; "
                f"it may use {allowed_models}",
            )
        place(self.shares, grant, req)
        self.rooms.watch(grant, req)
        if not route.priced or grant.budget_tokens is None:
            return None
        worst = worst_case(grant.provider, req.doc, len(req.body))
        reservation = self.budgets.reserve(grant.ledger, grant.budget_tokens, worst)
        if reservation is None:
            spent, held = self.budgets.held(grant.ledger)
            raise Refused(
                400,
                "budget",
                "invalid_request_error",
                "durabench: this attempt's budget of "
                f"{counted(grant.budget_tokens, 'token')} is spent "
                f"({spent:,} used, {held:,} held by requests in flight); the attempt ends here",
            )
        return reservation

    def _secret(self, grant: Grant) -> tuple[str, str]:
        try:
            return self.resolve(grant)
        except LookupError as exc:
            raise Refused(
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
        await self._stream(grant, req, out, url, send, reservation)

    async def _mcp(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], rest: str
    ) -> None:
        """The lane's MCP server over HTTP: its one endpoint, the placeholder swapped."""
        grant = self.store.find(mcp_key(headers))
        if grant is None or grant.mcp is None:
            await _reply(send, 401, _error("authentication_error", "no MCP server for this key"))
            return
        req = AgentRequest("mcp", rest, scope["method"], headers, [], grant.ledger)
        query = scope.get("query_string", b"").decode("latin-1")
        with self.revoked.serving(mcp_key(headers)):
            await self._once(req, send, self._mcp_request(grant, req, query, receive, send))

    async def _mcp_request(
        self, grant: Grant, req: AgentRequest, query: str, receive: Receive, send: Send
    ) -> None:
        server = grant.mcp
        if server is None:
            raise ValueError("an MCP request of an attempt with no MCP server")
        if path_fault(req.path) or req.path != (server.url_suffix or "/"):
            message = f"durabench gateway: {req.path[:120]} is not the MCP server's endpoint"
            raise Refused(403, "path", "permission_error", message)
        if req.method not in MCP_METHODS:
            message = f"durabench gateway: {req.method} is not an MCP request"
            raise Refused(403, "path", "permission_error", message)
        await take_body(req, receive, self.bodies, parse=False)
        req.rpc = rpc_call(req.body)
        try:
            url, token = self.resolve_mcp(grant)
        except LookupError as exc:
            raise Refused(503, "no key on this host", "api_error", str(exc)) from None
        out = forwarded(req.headers)
        out[server.auth_header] = f"{server.auth_scheme} {token}".strip()
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

        Its framing is the gateway's own: the body's length, no encoding asked for (the
        bytes pass through as the API sent them). From before it goes out until its
        ledger line is written it is noted in flight: were this process killed
        meanwhile, the worker writes the line for it.
        """
        headers["content-length"] = str(len(req.body))
        headers["accept-encoding"] = "identity"
        upstream = httpx.Request(req.method, url, headers=headers, content=req.content())
        if not upstream.url.raw_path.partition(b"?")[0].endswith(req.path.encode()):
            message = "durabench gateway: the path would change on the way out"
            raise Refused(403, "path", "permission_error", message)
        held = reservation.tokens if reservation is not None else 0
        noted = (
            self.inflight.serving(Path(grant.ledger), grant.provider, held)
            if self.inflight is not None
            else contextlib.nullcontext()
        )
        with noted:
            await exchange(
                self.clients, self.budgets, grant.ledger, req, upstream, send, reservation
            )


def _error(kind: str, message: str) -> dict[str, Any]:
    """An error body every CLI shows: Anthropic's shape, with OpenAI's ``message`` too."""
    return {"type": "error", "error": {"type": kind, "message": message}}


async def _reply(send: Send, status: int, doc: Mapping[str, Any]) -> None:
    data = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
