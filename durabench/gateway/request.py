"""One agent request as the gateway reads it: its body within a limit, its model, its cost.

The body is read chunk by chunk and refused the moment it passes
:data:`MAX_REQUEST_BYTES` (or at once, when its ``content-length`` says it will), and it
is held once: forwarded from the same buffer in slices, not joined or copied whole.

It is read as JSON only within bounds, and in a thread: a body of millions of elements
would take the gateway's memory (sixteen such bodies at once knocked it over), and one
nested 200k deep raised out of the parser; either is refused as too large, and the
parse of one agent's body does not hold the event loop every attempt shares.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal

from durabench.gateway.ledger import LedgerEntry, append_entry
from durabench.gateway.mcp_answer import NO_CALL, RpcCall
from durabench.gateway.meter import ResponseUsage
from durabench.gateway.providers import ProviderName
from durabench.numerals import read_int

__all__ = [
    "MAX_ATTEMPT_BYTES",
    "MAX_ELEMENTS",
    "MAX_REQUEST_BYTES",
    "AgentRequest",
    "AttemptBytesFull",
    "BodyBytes",
    "BodyIncomplete",
    "BodyTooLarge",
    "BodyTooSlow",
    "RoomHook",
    "parse_document",
    "read_body",
]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
RoomHook = Callable[[int, Mapping[str, str], str, str], None]
"""Called with an answer's status, headers, body error type and Gemini ``retryDelay``."""

MAX_REQUEST_BYTES = 32 << 20
"""A request body past this is refused: the APIs take no larger request."""
_SLICE = 64 << 10


MAX_ELEMENTS = 250_000
"""A body's JSON may hold at most this many values (counted from above: every ``,``,
``[`` and ``{``, strings' too). A coding CLI's largest request holds tens of thousands."""


class BodyTooLarge(Exception):
    """The body passed :data:`MAX_REQUEST_BYTES`, :data:`MAX_ELEMENTS` or the parser's depth."""


MAX_ATTEMPT_BYTES = 64 << 20
"""Bodies one attempt may hold in the gateway at once, over all its requests in flight:
sixteen bodies of 30 MiB from one sandbox took the gateway's memory from every other."""


class AttemptBytesFull(BodyTooLarge):
    """The attempt's requests in flight hold :data:`MAX_ATTEMPT_BYTES` of bodies already."""


class BodyBytes:
    """Bytes of request bodies each attempt holds in the gateway, by its ledger."""

    def __init__(self, cap: int = MAX_ATTEMPT_BYTES) -> None:
        """``cap``: what one attempt may hold at once."""
        self.cap = cap
        self.held: dict[str, int] = {}

    def take(self, attempt: str, n: int) -> bool:
        """Hold ``n`` more bytes for ``attempt``; ``False`` (nothing held) past its cap."""
        now = self.held.get(attempt, 0)
        if now + n > self.cap:
            return False
        self.held[attempt] = now + n
        return True

    def give_back(self, attempt: str, n: int) -> None:
        """The attempt's request ended: its ``n`` bytes are free."""
        left = self.held.get(attempt, 0) - n
        if left > 0:
            self.held[attempt] = left
        else:
            self.held.pop(attempt, None)


class BodyIncomplete(Exception):
    """The agent hung up before its body ended: nothing of it goes on."""


class BodyTooSlow(BodyIncomplete):
    """The body did not arrive within its deadline (raised by the request limits' receive)."""


def parse_document(body: bytes | bytearray) -> dict[str, Any]:
    """The body as a JSON object (``{}`` when it is none), parsed within bounds.

    Depth is bounded by the parser's own recursion guard (the interpreter's limit).

    Raises:
        BodyTooLarge: it holds more than :data:`MAX_ELEMENTS` values, or nests too deep.
    """
    if not body:
        return {}
    if body.count(b",") + body.count(b"[") + body.count(b"{") > MAX_ELEMENTS:
        raise BodyTooLarge
    try:
        doc = json.loads(body)
    except RecursionError:
        raise BodyTooLarge from None
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


async def read_body(
    receive: Receive, declared: str | None, room: Callable[[int], bool] | None = None
) -> bytearray:
    """The whole body, read within :data:`MAX_REQUEST_BYTES` and the attempt's ``room``.

    ``room(n)`` holds ``n`` more bytes for the attempt, or says there is no room.

    Raises:
        BodyTooLarge: its ``content-length`` (``declared``) or its bytes pass the limit.
        AttemptBytesFull: the attempt's bodies in flight have no room for it.
        BodyIncomplete: the agent hung up before the body ended.
    """
    size = None if declared is None else read_int(declared)
    if declared is not None and (size is None or size > MAX_REQUEST_BYTES):
        raise BodyTooLarge
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BodyIncomplete
        chunk = message.get("body", b"")
        if room is not None and not room(len(chunk)):
            raise AttemptBytesFull
        body += chunk
        if len(body) > MAX_REQUEST_BYTES:
            raise BodyTooLarge
        if not message.get("more_body"):
            return body


class AgentRequest:
    """One agent request: where it goes, what it says, and what it asks for."""

    def __init__(
        self,
        provider: ProviderName | Literal["mcp"],
        path: str,
        method: str,
        headers: dict[str, str],
        query: list[tuple[str, str]],
        ledger: str = "",
    ) -> None:
        """``ledger``: the attempt's ledger file, where :meth:`record` writes its line."""
        self.provider, self.path, self.method = provider, path, method
        self.headers, self.query, self.ledger = headers, query, ledger
        self.recorded = False
        """Its ledger line is written: it gets no other."""
        self.written: LedgerEntry | None = None
        """That line, once written (what a capped run's spend is settled with)."""
        self.held = 0
        """Bytes of its body held against its attempt's :class:`BodyBytes`."""
        self.body = bytearray()
        self.doc: dict[str, Any] = {}
        """The body as JSON, when it is a JSON object."""
        self.rate_share = 0
        """Its attempt's share of the account's requests a minute (0: none known)."""
        self.beyond_share = False
        """It was past that share (:mod:`.rate_share`)."""
        self.on_answer: Callable[[Mapping[str, str]], None] | None = None
        """Called with the API's answer's headers before the ledger line is written."""
        self.on_room: RoomHook | None = None
        """Called with the answer's status, headers, the error its body named and a
        Gemini ``retryDelay``: what it said of the account's rate limits (:mod:`.room_book`)."""
        self.answered_at: float | None = None
        """When the API's answer's headers arrived: what it says of the rate limits is as
        of then, however long its body streams after."""
        self.rpc: RpcCall = NO_CALL
        """The JSON-RPC call an MCP request makes (read from its body once taken)."""
        self.started = time.time()

    async def take_body(self, body: bytearray, *, parse: bool = True) -> None:
        """Keep the body, and read it as JSON (in a thread) when ``parse`` says it matters.

        Raises:
            BodyTooLarge: its JSON passes the bounds of :func:`parse_document`.
        """
        self.body = body
        if parse and body:
            self.doc = await asyncio.to_thread(parse_document, body)

    def asked_model(self) -> str:
        """The model the API will serve: the body's, or for Gemini the path's.

        Gemini serves the model its path names whatever the body says, so a body field
        there must not stand in for it.
        """
        if self.provider == "gemini":
            if "/models/" in self.path:
                return self.path.split("/models/", 1)[1].split(":", 1)[0][:200]
            return ""
        model = self.doc.get("model")
        return model[:200] if isinstance(model, str) else ""

    def force_usage(self) -> None:
        """Make a streamed chat completion report its usage.

        OpenAI sends none unless ``stream_options.include_usage`` is set, and the meter
        would read zero.
        """
        if self.provider != "openai" or self.path != "/v1/chat/completions":
            return
        if self.doc.get("stream") is not True:
            return
        options = self.doc.get("stream_options")
        options = options if isinstance(options, dict) else {}
        if options.get("include_usage") is True:
            return
        self.doc["stream_options"] = options | {"include_usage": True}
        self.body = bytearray(json.dumps(self.doc).encode())

    async def content(self) -> AsyncIterator[bytes]:
        """The body in slices, for the upstream request."""
        view = memoryview(self.body)
        for start in range(0, len(view), _SLICE):
            yield bytes(view[start : start + _SLICE])

    def record(self, status: int, **fields: Any) -> None:
        """Write the request's one ledger line (a second call writes nothing)."""
        if self.recorded or not self.ledger:
            return
        self.recorded = True
        self.written = self.entry(status, **fields)
        append_entry(Path(self.ledger), self.written)

    def entry(self, status: int, **fields: Any) -> LedgerEntry:
        """The request's ledger line."""
        now = time.time()
        fields.setdefault("usage", ResponseUsage())
        return LedgerEntry(
            at=now,
            provider=self.provider,
            path=self.path[:500],
            status=status,
            asked_model=self.asked_model(),
            seconds=round(now - self.started, 3),
            rpc_method=self.rpc.method,
            rate_share=self.rate_share,
            beyond_share=self.beyond_share,
            **fields,
        )
