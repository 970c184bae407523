"""Stop at once when the workflow was asked to cancel, even if the step before ended well.

A step that waits for its cancellation to complete (a container phase, an attempt's child
workflow) and ends anyway, because its activity never heard the ask, hands back its result
as though nothing had been cancelled: the SDK clears the task's cancel. The workflow's own
cancel request stays, so code about to start something paid (an agent session, a new
attempt, a pair) asks it first.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow

__all__ = ["stop_if_cancelled"]


def stop_if_cancelled(before: str) -> None:
    """Raise ``asyncio.CancelledError`` if this workflow was asked to cancel.

    ``before``: what is not started, for the record (``"the agent"``, ``"attempt 2"``).
    Cleanup in ``finally`` still runs; the workflow then ends cancelled.
    """
    reason = workflow.cancellation_reason()
    if reason is not None:
        why = f": {reason}" if reason else ""
        raise asyncio.CancelledError(f"cancelled{why}; stopped before {before}")
