"""How a run hears that its pairs ended: from each pair's own close, never a message.

A pair the run started in this workflow run is its child: the child-closed event carries
the pair's result, or the error it failed with, or that it was cancelled or terminated.
Pairs carried across continue-as-new are not the new run's children, so the
``await_pairs`` activity waits on the server for the first of them to close and says how
each that closed ended; so it does for a pair whose start the run's cancel interrupted,
of which the run holds no handle. Either way :func:`durabench.models.pair.pair_end`
reads the close and ``ended(done)`` is called once per pair. Nothing here is a signal:
no one but the server can tell the run that a pair ended, and the Web UI offers people
no internal message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities import PairActivities
    from activities.pair_ends import failed_pair
    from durabench.models.pair import AwaitPairsInput, PairDone, pair_end
    from durabench.wording import counted

from workflows.ids import pair_workflow_id
from workflows.policies import HEARTBEAT, WATCH_RETRY

__all__ = [
    "CARRIED_GROUP",
    "CARRIED_WAIT",
    "Ended",
    "Watches",
    "watch_carried",
    "watch_child",
    "watch_interrupted",
]

Ended = Callable[[PairDone], None]

CARRIED_GROUP = 16
"""Carried pairs one ``await_pairs`` waits for. Each close of one asks again for the rest
of its group, so one wait for every pair would write the pairs in flight into history
once per close (their square); groups keep it to their number times 16."""

CARRIED_WAIT = timedelta(hours=1)
"""How long one ``await_pairs`` waits for a carried pair to close before it answers none
(the run then asks again): it bounds the activity, not how soon an end is heard."""


async def watch_child(
    task_id: str, handle: workflow.ChildWorkflowHandle[Any, Any], ended: Ended
) -> None:
    """Wait for the pair the run started to close, then report how it ended."""
    try:
        ended(pair_end(task_id, result=await handle))
    except ChildWorkflowError as err:
        ended(failed_pair(task_id, err.cause))


async def watch_interrupted(run_id: str, task_id: str, ended: Ended) -> None:
    """The run was cancelled while this pair's start was in flight: hear it close anyway.

    The SDK then cancels the start, or the pair if it had started, and gives the run no
    handle to wait on. The server says when the pair closed (at once if it never
    started); either way it ended cancelled with its run.
    """
    while not await _closes(run_id, [task_id]):
        continue  # none closed within the wait: ask again
    ended(pair_end(task_id, cancelled=True))


async def _closes(run_id: str, task_ids: list[str]) -> tuple[PairDone, ...]:
    """How the first of these pairs to close ended (more if they closed together)."""
    return await workflow.execute_activity_method(
        PairActivities.await_pairs,
        AwaitPairsInput(
            pairs=tuple((pair_workflow_id(run_id, task_id), task_id) for task_id in task_ids),
            wait_sec=CARRIED_WAIT.total_seconds(),
        ),
        start_to_close_timeout=CARRIED_WAIT + timedelta(minutes=5),
        heartbeat_timeout=HEARTBEAT,
        retry_policy=WATCH_RETRY,
        summary=f"wait for {counted(len(task_ids), 'pair')} the run does not hold a handle of",
    )


async def watch_carried(
    run_id: str, carried: Iterable[str], running: Callable[[], set[str]], ended: Ended
) -> None:
    """Wait for the pairs carried from an earlier workflow run to close, one or more at a time."""
    carried = tuple(carried)
    while pending := sorted(set(carried) & running()):
        for pair in await _closes(run_id, pending):
            ended(pair)


class Watches:
    """The run's waits for its pairs to close, run beside its main task.

    An error of a task nobody awaits dies unheard, and the run would wait for ever for a
    pair it no longer watches, its slot held and its report never written; so a failed
    watch is kept, and the run's main task raises it where it waits (``failed`` is part
    of each of its wait conditions).
    """

    def __init__(self) -> None:
        self.tasks: list[asyncio.Task[None]] = []
        self.failure: BaseException | None = None

    def start(self, watching: Coroutine[Any, Any, None]) -> None:
        """Run ``watching`` beside the run's main task."""
        task = asyncio.create_task(watching)
        task.add_done_callback(self._ended)
        self.tasks.append(task)

    def _ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None and self.failure is None:
            self.failure = task.exception()

    @property
    def failed(self) -> bool:
        """Whether a watch could not go on."""
        return self.failure is not None

    def raise_if_failed(self, run_id: str, running: Iterable[str]) -> None:
        """Fail the run if it can no longer hear some of its pairs end, saying what to do."""
        if self.failure is None:
            return
        err = self.failure
        cause = err.cause if isinstance(err, ActivityError) else err
        pairs = ", ".join(sorted(running)) or "none"
        raise ApplicationError(
            f"the run cannot hear its pairs end ({cause}); pairs still running: {pairs}. They "
            f"go on and keep their results: `python -m starter status {run_id}` shows them, "
            "and `python -m starter report` reports the run once they are done",
            non_retryable=True,
        ) from err
