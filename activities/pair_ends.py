"""Wait for pairs a run carried over continue-as-new: they are not the new run's children.

A pair the run started itself reaches it through its child-closed event. One started by an
earlier workflow run of the same run closes unseen by the new one; this activity waits on
the server for such pairs (a long poll of each one's result, as a client waits for any
workflow) and says how each that closed ended, so that the run counts it at once and from
the pair's own close, never from a message anyone could send.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress

from temporalio import activity
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.service import RPCError, RPCStatusCode

from activities.boundary import KnownSecrets, scrubbed
from activities.heartbeat import heartbeating
from durabench.models.pair import AwaitPairsInput, PairDone, closed_how, pair_end
from durabench.models.results import PairResult
from durabench.settings.values import Settings

__all__ = ["PairActivities", "closed_pair", "failed_pair"]


def failed_pair(task_id: str, cause: BaseException | None) -> PairDone:
    """How a pair that closed with ``cause`` (its error, or its cancellation) ended.

    The same for the run, which gets it as its child's error, and for this activity.
    """
    app = cause if isinstance(cause, ApplicationError) else None
    return pair_end(
        task_id,
        error_type=app.type if app else None,
        details=app.details if app else (),
        cancelled=isinstance(cause, CancelledError),
        how=closed_how(cause) if cause else "it failed without an error",
    )


async def closed_pair(client: Client, workflow_id: str, task_id: str) -> PairDone:
    """Wait until the pair ``workflow_id`` closes; how it ended."""
    handle = client.get_workflow_handle(workflow_id, result_type=PairResult)
    try:
        return pair_end(task_id, result=await handle.result())
    except WorkflowFailureError as err:
        return failed_pair(task_id, err.cause)
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        return pair_end(task_id, how="it no longer exists on the server")


class PairActivities:
    """Activities about a run's pairs that need the Temporal client."""

    def __init__(self, client: Client, settings: Settings) -> None:
        self.client = client
        self.secrets = KnownSecrets(settings.accounts_file)

    @activity.defn(name="await_pairs")
    @scrubbed
    async def await_pairs(self, data: AwaitPairsInput) -> tuple[PairDone, ...]:
        """How each of these pairs ended, once one has (none after ``wait_sec``)."""
        waits = [
            asyncio.create_task(closed_pair(self.client, workflow_id, task_id))
            for workflow_id, task_id in data.pairs
        ]
        try:
            async with heartbeating(f"waiting for {len(waits)} carried pairs"):
                await asyncio.wait(
                    waits, timeout=data.wait_sec, return_when=asyncio.FIRST_COMPLETED
                )
        finally:
            for wait in waits:
                wait.cancel()
            for wait in waits:
                with suppress(asyncio.CancelledError):
                    await wait
        return tuple(wait.result() for wait in waits if not wait.cancelled())
