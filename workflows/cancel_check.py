"""Stop at once when the workflow was asked to cancel, even if the step before ended well.

A step that waits for its cancellation to complete (a container phase, an attempt's child
workflow) and ends anyway, because its activity never heard the ask, hands back its result
as though nothing had been cancelled: the SDK clears the task's cancel. The workflow's own
cancel request stays, so code about to start something paid (an agent session, a new
attempt, a pair) asks it first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from temporalio import workflow

__all__ = ["cancel_requested", "despite_cancel", "stop_if_cancelled"]

T = TypeVar("T")


def stop_if_cancelled(before: str) -> None:
    """Raise ``asyncio.CancelledError`` if this workflow was asked to cancel.

    ``before``: what is not started, for the record (``"the agent"``, ``"attempt 2"``).
    Cleanup in ``finally`` still runs; the workflow then ends cancelled.
    """
    reason = workflow.cancellation_reason()
    if reason is not None:
        why = f": {reason}" if reason else ""
        raise asyncio.CancelledError(f"cancelled{why}; stopped before {before}")


async def despite_cancel(step: Awaitable[T]) -> T:
    """Await ``step`` to its end, even if the workflow is asked to cancel meanwhile.

    For the steps a cancel must not throw away: the tests, the verdict and the record of an
    agent session that ran (paid for already), the removal of a container. The ask is not
    lost: :func:`stop_if_cancelled` still sees it, so nothing paid starts after the step.
    """
    task = asyncio.ensure_future(step)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if task.cancelled():  # the step itself was cancelled (the worker let go of it)
            raise
        return await task


def cancel_requested() -> bool:
    """Whether the workflow itself was cancelled, however the cancel reached it.

    What decides is the workflow's own cancel request, not the error: a cancel that
    lands while an activity runs arrives as that activity's error, and a worker that
    evicts the run from its cache cancels its tasks with ``asyncio.CancelledError``
    too (the run goes on elsewhere: its pairs must not be cancelled).
    """
    return workflow.cancellation_reason() is not None
