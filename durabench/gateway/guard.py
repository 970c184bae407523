"""Request limits of the gateway, wrapped around its app: per attempt, in all, and the body's time.

A request counts against its placeholder key (as the app finds it: an API-key header, a
bearer token, ``?key=``, or the last word of an MCP auth header) and against the host.
Past its attempt's limit it waits for one of the attempt's requests to end (an honest
burst sees latency, not errors), its body unread, and gets 429 if none ends in time;
past the host's it gets 503 at once. So what one attempt holds in flight is bounded
whatever it sends, and what waits holds only its connection. A body must arrive within
its deadline: a sender that stalls gets 408 and loses its connection, and the app's read
of it ends there.

The end of each answer is held back until the app has returned, so the attempt's ledger
line is on disk before its agent sees the answer end: an attempt that ends with its
agent's last request is metered in full, though the gateway is another process.

It answers ``/healthz`` itself: to the worker's supervisor (a connection from the
gateway's own address) with what it checks (that this is a durabench gateway, its code
version and its process, and which grant store it serves); to a sandbox with only that
it is a durabench gateway. A sandbox sees nothing that another attempt's activity
changes: no count of requests in flight (one lane signalled its answer to the other bit
by bit through one), no process id (a restart another attempt provoked).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from durabench.gateway.limits import GatewayLimits
from durabench.gateway.providers import TOKEN_PREFIX, client_key, mcp_key, route_of
from durabench.gateway.request import BodyTooSlow
from durabench.wording import counted

__all__ = ["LimitedApp"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class _Slots:
    """One attempt's requests in flight: a semaphore, and who holds or waits for it."""

    def __init__(self, size: int) -> None:
        self.free = asyncio.Semaphore(size)
        self.users = 0


class LimitedApp:
    """The gateway's app behind per-attempt and host-wide request limits."""

    def __init__(
        self,
        app: App,
        limits: GatewayLimits,
        health: Mapping[str, Any],
        overloaded: Callable[[Scope], None] | None = None,
    ) -> None:
        """``overloaded`` records a request turned away because the host is full."""
        self.app, self.limits, self.health = app, limits, dict(health)
        self.overloaded = overloaded
        self.slots: dict[str, _Slots] = {}
        self.total = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One request: answered here when over a limit, else by the app within its deadline."""
        if scope["type"] != "http":
            return
        if scope["path"] == "/healthz":
            await _reply(send, 200, self.health if _local(scope) else _PUBLIC_HEALTH)
            return
        if self.total >= self.limits.requests:
            if self.overloaded is not None:
                self.overloaded(scope)
            await _refuse(send, 503, "overloaded_error", "the gateway has too many requests")
            return
        key = _placeholder(scope)
        slots = self.slots.setdefault(key, _Slots(self.limits.requests_per_attempt))
        slots.users += 1
        try:
            await self._in_a_slot(slots, scope, receive, send)
        finally:
            slots.users -= 1
            if not slots.users:
                del self.slots[key]

    async def _in_a_slot(self, slots: _Slots, scope: Scope, receive: Receive, send: Send) -> None:
        """Wait for one of the attempt's slots (its body unread meanwhile), then run."""
        wait = self.limits.queue_timeout_sec
        try:
            await asyncio.wait_for(slots.free.acquire(), wait)
        except TimeoutError:
            message = (
                f"this attempt had {counted(self.limits.requests_per_attempt, 'request')} "
                "in flight, the "
                f"most it may, for {wait:g} s; retry when one ends"
            )
            await _refuse(send, 429, "too_many_requests_in_flight", message)
            return
        self.total += 1
        try:
            await self._within_deadline(scope, receive, send)
        finally:
            self.total -= 1
            slots.free.release()

    async def _within_deadline(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.body_timeout_sec
        body_done, started = False, False

        async def timed_receive() -> MutableMapping[str, Any]:
            nonlocal body_done
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise BodyTooSlow from None
            body_done = not message.get("more_body", False)
            return message

        async def watched_send(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            started = True
            if message["type"] == "http.response.body" and not message.get("more_body"):
                held.append(message)  # the end of the answer waits for the app's ledger line
                return
            await send(message)

        held: list[MutableMapping[str, Any]] = []
        try:
            await self.app(scope, timed_receive, watched_send)
        except BodyTooSlow:
            if not started:  # else the cut response tells the agent; uvicorn closes it
                late = f"the request's body did not arrive in {self.limits.body_timeout_sec:g} s"
                await _refuse(send, 408, "request_timeout", late)
        for message in held:
            await send(message)


_PUBLIC_HEALTH = {"gateway": "durabench"}


def _local(scope: Scope) -> bool:
    """Whether the request came from the gateway's own address (the worker's checks)."""
    client, server = scope.get("client"), scope.get("server")
    return bool(client and server and client[0] == server[0])


def _placeholder(scope: Scope) -> str:
    """The placeholder key the app will look the grant up by ('' when there is none)."""
    headers: dict[str, str] = {
        k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]
    }
    raw = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
    if route_of(raw)[0] == "mcp":
        return mcp_key(headers)[:128]
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    key = client_key(headers, query)
    return key[:128] if key.startswith(TOKEN_PREFIX) else ""


async def _refuse(send: Send, status: int, kind: str, message: str) -> None:
    """An error every CLI shows; the connection closes, so nothing unread stays on it."""
    doc = {"type": "error", "error": {"type": kind, "message": f"durabench gateway: {message}"}}
    extra = ((b"retry-after", b"1"),) if status in (429, 503) else ()
    await _reply(send, status, doc, ((b"connection", b"close"), *extra))


async def _reply(
    send: Send, status: int, doc: Mapping[str, Any], extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    data = json.dumps(doc).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
