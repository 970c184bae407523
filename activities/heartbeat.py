"""Heartbeats for long activities, sent on a timer while the work runs.

Long work in durabench is a thread (Docker SDK calls block) or a container exec; a
background task heartbeats meanwhile, so a dead worker is noticed within the heartbeat
timeout and the attempt is retried.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress

from temporalio import activity

__all__ = ["AGENT_BEAT_S", "HEARTBEAT_EVERY_S", "heartbeating", "periodically"]

HEARTBEAT_EVERY_S = 10.0
"""A third of the shortest heartbeat timeout durabench schedules (30 s)."""
AGENT_BEAT_S = 1.0
"""The agent phase beats every second: a cancel reaches an activity only with a
heartbeat's answer, and a paid session should stop within about a second of its cancel
(the worker sends a beat at most once per ``runtime.workers.CANCEL_NOTICE``)."""


@asynccontextmanager
async def periodically(
    action: Callable[[], Awaitable[None]], every_s: float
) -> AsyncIterator[None]:
    """Await ``action`` now and every ``every_s`` seconds until the block ends."""

    async def loop() -> None:
        while True:
            await action()
            await asyncio.sleep(every_s)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


@asynccontextmanager
async def heartbeating(detail: str, every_s: float = HEARTBEAT_EVERY_S) -> AsyncIterator[None]:
    """Heartbeat ``detail`` every ``every_s`` seconds until the block ends."""

    async def beat() -> None:
        activity.heartbeat(detail)

    async with periodically(beat, every_s):
        yield
