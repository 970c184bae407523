"""The gateway's HTTP/1.1: connection limits, a deadline for headers, and strict heads.

uvicorn accepts every connection and keeps one that never sends a byte for ever, so a
sandbox could hold thousands of idle sockets. A connection has no placeholder key until
its first request's headers arrive, but it has an address: on the gateway network each
sandbox has its own, so the address stands for the attempt until the key is known. The
limits are kept in uvicorn's own HTTP/1.1 protocol (h11), subclassed: a connection over
a limit is reset the moment it is accepted, which frees its file at once.

Every request's head is checked byte for byte before h11 reads it (:mod:`.head`): one
that is ambiguous about where it ends, or that h11 itself refuses, gets a 400 the CLIs
show, is ledgered against the attempt whose key it carries (``refused``), and its
connection is closed, so nothing after it on that connection is read as a request.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from durabench.gateway.head import END_OF_HEAD, head_fault
from durabench.gateway.limits import GatewayLimits

__all__ = ["StrictConnection", "StrictH11Protocol", "limited_protocol"]

HeadRefused = Callable[[bytes, str], None]
"""Records a refused head: ``(head, why)``, as the app ledgers it."""


class StrictConnection(h11.Connection):
    """h11's server side, refusing an ambiguous head before h11 picks a reading of it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused: tuple[bytes, str] | None = None
        """The head refused last and why; ``None`` while every head passed."""
        self._look = True
        """A head may have ended since the last look: a line end came, or a cycle began
        (its head may be buffered already). A sender trickling bytes costs no copies."""

    def receive_data(self, data: bytes) -> None:
        """h11's, noting whether a head may have ended."""
        self._look = self._look or not data or b"\n" in data
        super().receive_data(data)

    def start_next_cycle(self) -> None:
        """h11's; a pipelined head may be waiting in the buffer."""
        super().start_next_cycle()
        self._look = True

    def next_event(self) -> Any:
        """h11's next event; raises ``RemoteProtocolError`` for a head refused here or there."""
        if self.their_state is not h11.IDLE or not self._look:
            return super().next_event()
        self._look = False
        data = self.trailing_data[0]
        end = END_OF_HEAD.search(data)
        head = data[: end.end()] if end is not None else None
        fault = head_fault(head) if head is not None else ""
        if head is not None and fault:
            self.refused = (head, fault)
            raise h11.RemoteProtocolError(fault, error_status_hint=400)
        try:
            return super().next_event()
        except h11.RemoteProtocolError as exc:
            if head is not None:
                self.refused = (head, str(exc))
            raise


class StrictH11Protocol(H11Protocol):
    """Uvicorn's h11 protocol on a :class:`StrictConnection`: a refused head is ledgered."""

    on_refused: ClassVar[HeadRefused | None] = None
    """Records each head refused (the app's ledger line for it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        size = self.config.h11_max_incomplete_event_size
        self.conn = StrictConnection(
            h11.SERVER, **({} if size is None else {"max_incomplete_event_size": size})
        )

    def send_400_response(self, msg: str) -> None:
        """A refused head: a JSON error the CLIs show, ledgered; then the connection closes.

        Written raw: h11 has no request to answer when it refused the head.
        """
        held = self.conn.refused if isinstance(self.conn, StrictConnection) else None
        if held is None:  # a body h11 could not read: the app's request ends there
            super().send_400_response(msg)
            return
        head, why = held
        record = type(self).on_refused
        if record is not None:
            record(head, why)
        self.transport.write(_refusal(why))
        self.transport.close()


def limited_protocol(
    limits: GatewayLimits, refused: HeadRefused | None = None
) -> type[H11Protocol]:
    """Uvicorn's h11 protocol held to ``limits``; one per server (its counts are shared).

    ``refused`` records each head refused (the app's ledger line for it).
    """
    peers: Counter[str] = Counter()

    class LimitedH11Protocol(StrictH11Protocol):
        """Closes connections over the limits, too slow to send headers, or ambiguous."""

        on_refused = refused
        _peer: str | None = None
        _deadline: asyncio.TimerHandle | None = None
        _armed_cycle: object = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = self.client[0] if self.client else ""
            local = self.server is not None and peer == self.server[0]  # the worker's checks
            over_all = not local and len(self.connections) > limits.connections
            per_peer = limits.connections_per_peer
            if over_all or (per_peer and peers[peer] >= per_peer):
                transport.abort()
                return
            self._peer = peer
            peers[peer] += 1
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._peer is not None:
                peers[self._peer] -= 1
                if not peers[self._peer]:
                    del peers[self._peer]
                self._peer = None
            if self._deadline is not None:
                self._deadline.cancel()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            idle = self.cycle is None or self.cycle.response_complete  # no pipelined request
            if idle and not self.transport.is_closing():
                self._arm()

        def _arm(self) -> None:
            """The next request's headers are due within the header timeout."""
            if self._deadline is not None:
                self._deadline.cancel()
            self._armed_cycle = self.cycle
            self._deadline = self.loop.call_later(limits.header_timeout_sec, self._too_slow)

        def _too_slow(self) -> None:
            if self.cycle is self._armed_cycle and not self.transport.is_closing():
                self.transport.abort()  # no request began: idle, or headers too slow

    return LimitedH11Protocol


def _refusal(why: str) -> bytes:
    """The raw 400 for a refused head, with what to send instead."""
    message = (
        f"durabench gateway: the request is malformed or ambiguous ({why}); send one "
        "Content-Length or Transfer-Encoding: chunked, ASCII headers on CRLF lines, "
        "nothing folded"
    )
    doc = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    body = json.dumps(doc).encode()
    head = (
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body
