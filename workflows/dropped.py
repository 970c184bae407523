"""Tell a workflow's own end from its worker letting go of it, in a ``finally``.

A ``finally`` in workflow code runs for two different reasons. One is the workflow's own
outcome: it succeeded, failed or was cancelled, and its cleanup (remove the container,
give the account slot back) belongs in its history. The other is the worker letting go of
a workflow that has not ended:

* evicted from the worker's cache (more workflows than ``max_cached_workflows``, a sticky
  queue that timed out): the SDK cancels the workflow's tasks and refuses every command
  with its ``_WorkflowBeingEvictedError``;
* a worker that stops does not evict the workflows it holds (temporalio 1.35): their
  coroutines stay suspended until Python's garbage collector closes them, by throwing
  ``GeneratorExit`` into them, on whatever thread and in whatever workflow's event loop
  runs at that moment. A command issued then is added to that other workflow, whose
  history gains activities it never asked for, and which fails its next replay.

Either way the workflow is still open on the server: a worker replays it to where it was
and carries on, and its cleanup runs then, once. So cleanup in a ``finally`` asks
:func:`being_dropped` first and, when it says so, does nothing (no command, no clock, no
await).
"""

from __future__ import annotations

import sys

__all__ = ["EVICTED", "being_dropped"]

EVICTED = "_WorkflowBeingEvictedError"
"""The name of the exception the SDK raises at a command of a workflow it evicts (private
to the SDK, hence matched by name; tests/unit/test_dropped.py fails if it changes)."""


def being_dropped() -> bool:
    """Whether the exception unwinding the caller's ``finally`` is the worker letting go.

    ``GeneratorExit`` (the coroutine closed by the garbage collector) or the SDK's
    eviction error. A cancellation, a failure or a normal end is the workflow's own.
    """
    err = sys.exception()
    return isinstance(err, GeneratorExit) or type(err).__name__ == EVICTED
