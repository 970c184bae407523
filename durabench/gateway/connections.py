"""Connection limits of the gateway: per sandbox address, in all, and a deadline for headers.

uvicorn accepts every connection and keeps one that never sends a byte for ever, so a
sandbox could hold thousands of idle sockets. A connection has no placeholder key until
its first request's headers arrive, but it has an address: on the gateway network each
sandbox has its own, so the address stands for the attempt until the key is known. The
limits are kept in uvicorn's own HTTP/1.1 protocol (h11), subclassed: a connection over
a limit is reset the moment it is accepted, which frees its file at once.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from uvicorn.protocols.http.h11_impl import H11Protocol

from durabench.gateway.limits import GatewayLimits

__all__ = ["limited_protocol"]


def limited_protocol(limits: GatewayLimits) -> type[H11Protocol]:
    """Uvicorn's h11 protocol held to ``limits``; one per server (its counts are shared)."""
    peers: Counter[str] = Counter()

    class LimitedH11Protocol(H11Protocol):
        """Closes connections over the limits, and those too slow to send headers."""

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
