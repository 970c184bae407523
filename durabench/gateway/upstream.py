"""The gateway's connections to the model APIs: one pool per attempt, dropped after anything odd.

A keep-alive connection shared between attempts is a channel between them: an answer the
API sent that one attempt's request did not read (a request the API framed otherwise
than the gateway, an answer cut short) would be read by the next request on that
connection, which may be another lane's. So each attempt has an HTTP client of its own,
and a client that saw anything unusual (an error, a cut answer, an answer the agent left
half read) is closed as soon as its attempt's requests in flight end: its connections
carry nothing further. Idle clients past :data:`IDLE_KEPT` are closed, oldest first, so
the open files stay bounded on a host that ran thousands of attempts.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import httpx

__all__ = ["IDLE_KEPT", "UpstreamClients"]

IDLE_KEPT = 64
"""Idle attempts' clients kept open for their next request."""


@dataclass
class _Held:
    client: httpx.AsyncClient
    users: int = 0
    spoiled: bool = False


class UpstreamClients:
    """An HTTP client per attempt, made by ``make`` (timeouts and pool limits are its)."""

    def __init__(self, make: Callable[[], httpx.AsyncClient], idle_kept: int = IDLE_KEPT) -> None:
        """``make`` returns a new client; ``idle_kept`` idle clients stay open."""
        self.make, self.idle_kept = make, idle_kept
        self._held: OrderedDict[str, _Held] = OrderedDict()

    @contextlib.asynccontextmanager
    async def client(self, attempt: str) -> AsyncIterator[httpx.AsyncClient]:
        """The attempt's client for one request; closed afterwards if it was spoiled."""
        held = self._held.get(attempt)
        if held is None:
            held = self._held[attempt] = _Held(self.make())
        self._held.move_to_end(attempt)
        held.users += 1
        try:
            yield held.client
        finally:
            held.users -= 1
            if held.users == 0 and held.spoiled:
                await held.client.aclose()
            await self._trim()

    async def spoil(self, attempt: str) -> None:
        """Something unusual passed on the attempt's connections: none of them is reused.

        The client is let go at once (the attempt's next request gets a new one) and
        closed when the last request using it ends.
        """
        held = self._held.pop(attempt, None)
        if held is None:
            return
        held.spoiled = True
        if held.users == 0:
            await held.client.aclose()

    def open_for(self, attempt: str) -> bool:
        """Whether the attempt has a client open (tests: a spoiled one is gone)."""
        return attempt in self._held

    async def _trim(self) -> None:
        idle = [name for name, held in self._held.items() if held.users == 0]
        for name in idle[: max(0, len(idle) - self.idle_kept)]:
            await self._held.pop(name).client.aclose()

    async def aclose(self) -> None:
        """Close every client (the gateway stops)."""
        held, self._held = list(self._held.values()), OrderedDict()
        for h in held:
            await h.client.aclose()
