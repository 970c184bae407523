"""Requests of an attempt that has ended: drained, then cancelled, before its ledger is read.

An agent can leave requests in flight as its session exits: twelve streams of 60k tokens
each were ledgered after the worker read the ledger (the result said 20 tokens, the
ledger 720,020). When the worker revokes an attempt's grant its requests in flight get
:data:`CANCEL_AFTER_S` to end on their own (most are a stream's last seconds, metered
exactly); then they are cancelled, and their ledger line says ``cancelled`` and charges
the whole reservation, as the API may bill what it generated before the cut. The worker
waits for the attempt's in-flight notes to clear (:func:`~.inflight.serving_ledgers`)
before it reads the ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from durabench.gateway.grants import GrantStore

__all__ = ["CANCEL_AFTER_S", "RevokedRequests"]

CANCEL_AFTER_S = 30.0
"""How long a request of a revoked grant may still run before it is cancelled."""
_CHECK_S = 1.0


@dataclass
class _Serving:
    token: str
    revoked_at: float | None = None
    cancelled: bool = False


class RevokedRequests:
    """The requests in flight by their grant's key; those of revoked grants are cancelled."""

    def __init__(self, store: GrantStore, grace_s: float = CANCEL_AFTER_S) -> None:
        """``grace_s``: how long a request outlives its grant before it is cancelled."""
        self.store, self.grace_s, self.check_s = store, grace_s, _CHECK_S
        self._serving: dict[asyncio.Task[object], _Serving] = {}
        self._watch: asyncio.Task[None] | None = None

    @contextlib.contextmanager
    def serving(self, token: str) -> Iterator[None]:
        """The current request is the grant ``token``'s while the body runs."""
        task = asyncio.current_task()
        if task is None:
            yield
            return
        self._serving[task] = _Serving(token)
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(self._run())
        try:
            yield
        finally:
            self._serving.pop(task, None)

    async def _run(self) -> None:
        """Every second while anything is served: cancel what outlived its grant's grace."""
        loop = asyncio.get_running_loop()
        while self._serving:
            await asyncio.sleep(self.check_s)
            now = loop.time()
            for task, serving in list(self._serving.items()):
                if serving.cancelled or self.store.holds(serving.token):
                    continue
                if serving.revoked_at is None:
                    serving.revoked_at = now
                if now - serving.revoked_at >= self.grace_s:
                    serving.cancelled = True
                    task.cancel()
