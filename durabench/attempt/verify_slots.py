"""How many verifiers one worker host runs at once.

Agents mostly wait on a model API, so a host admits many sandboxes (by memory); verifiers
build and run tests, which is CPU-bound work: as many at once as sandboxes would
oversubscribe the CPUs and slow every one of them. A verifier therefore waits for a slot.
It waits at most as long as its phase can spare (the verify activity's slack over the
verifier's own time limit): past that it runs over the limit, since a phase that times
out waiting would cost the attempt more than a busy CPU does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["VerifySlots"]


class VerifySlots:
    """At most ``limit`` verifiers at once in this process (the host's worker)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0
        self.waiting = 0
        self._changed = asyncio.Condition()

    @asynccontextmanager
    async def slot(self, wait_at_most: float) -> AsyncIterator[bool]:
        """Hold a slot while verifying; yields whether one came within ``wait_at_most`` s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_at_most
        within = True
        async with self._changed:
            self.waiting += 1
            try:
                while self.running >= self.limit:
                    left = deadline - loop.time()
                    if left <= 0:
                        within = False
                        break
                    try:
                        await asyncio.wait_for(self._changed.wait(), left)
                    except TimeoutError:
                        pass
            finally:
                self.waiting -= 1
            self.running += 1
        try:
            yield within
        finally:
            async with self._changed:
                self.running -= 1
                self._changed.notify_all()
