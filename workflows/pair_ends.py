"""How a run notices pairs that end without telling it (terminated, reset away).

A pair signals ``pair_done`` however it ends by itself; terminated, it cannot. A pair
the run started in this workflow run is watched through its child-closed event; pairs
carried across continue-as-new are not the new run's children, so they are looked up
every ``pair_check_sec`` (the ``vanished_holders`` activity: which workflows no longer
run). Either way ``ended(task_id, how)`` is called; the run ignores a pair it has heard
from already.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError

from workflows.account_pool import vanished
from workflows.ids import pair_workflow_id

__all__ = ["Ended", "look_up", "watch_carried", "watch_child"]

Ended = Callable[[str, str], None]


async def watch_child(
    task_id: str, handle: workflow.ChildWorkflowHandle[Any, Any], ended: Ended
) -> None:
    """Wait for the pair the run started to close, then report how it closed."""
    try:
        await handle
        how = "it completed without telling the run"
    except ChildWorkflowError as err:
        how = f"{type(err.cause).__name__}: {err.cause}"
    ended(task_id, how)


async def watch_carried(
    run_id: str,
    carried: Iterable[str],
    running: Callable[[], set[str]],
    every: timedelta,
    ended: Ended,
) -> None:
    """Look up carried pairs still in flight every ``every``, until none is."""
    carried = tuple(carried)

    def pending() -> list[str]:
        return sorted(set(carried) & running())

    while pending():
        try:
            await workflow.wait_condition(
                lambda: not pending(), timeout=every, timeout_summary="check carried pairs"
            )
        except TimeoutError:
            await look_up(run_id, pending(), ended)


async def look_up(run_id: str, task_ids: Iterable[str], ended: Ended) -> None:
    """Report each of these pairs that no longer runs (one activity for all of them)."""
    by_workflow = {pair_workflow_id(run_id, task_id): task_id for task_id in task_ids}
    if not by_workflow:
        return
    holders = tuple((workflow_id, "") for workflow_id in by_workflow)
    for workflow_id, _ in await vanished(holders, f"check {len(holders)} carried pairs"):
        ended(by_workflow[workflow_id], "it ended without telling the run")
