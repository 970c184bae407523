"""Workflows the bench defines itself: the bare pipeline and the stand-in pair.

They live in a module of their own because the workflow sandbox re-imports a workflow's
module, which it cannot do for a script run as ``__main__``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durabench.models.pair import PairDone, PairInput
    from workflows import run_workflow_id

__all__ = ["BareChild", "BareJob", "BareParent", "StandInPair"]

_STEP = timedelta(seconds=60)


@dataclass(frozen=True)
class BareJob:
    """Input of :class:`BareParent`."""

    tasks: int
    """Children to run, one per task."""
    parallel: int
    """Children in flight at most (durabench's ``parallel``)."""


@workflow.defn
class BareChild:
    """One task: two trivial activities, one after the other."""

    @workflow.run
    async def run(self, task: str) -> str:
        """Run ``bare_step`` twice."""
        for _ in range(2):
            await workflow.execute_activity("bare_step", task, start_to_close_timeout=_STEP)
        return task


@workflow.defn
class BareParent:
    """The yardstick: one child per task, at most ``parallel`` in flight, nothing else."""

    def __init__(self) -> None:
        self._running = 0

    @workflow.run
    async def run(self, job: BareJob) -> int:
        """Start every child in a sliding window; return how many ended."""
        prefix = workflow.info().workflow_id
        children: list[asyncio.Task[str]] = []
        for i in range(job.tasks):
            await workflow.wait_condition(lambda: self._running < job.parallel)
            self._running += 1
            children.append(asyncio.create_task(self._child(f"{prefix}/{i}", f"t{i}")))
        return len(await asyncio.gather(*children))

    async def _child(self, child_id: str, task: str) -> str:
        try:
            return await workflow.execute_child_workflow(BareChild.run, task, id=child_id)
        finally:
            self._running -= 1


@workflow.defn(name="PairedTaskWorkflow", sandboxed=False)
class StandInPair:
    """Instant pair, as in ``tests/workflows/test_history_bounds.py``: it only tells its run.

    Registered under the real pair's name, so the real ``SuiteRunWorkflow`` drives it; it
    measures the run workflow alone, whose history is the only one that grows with a suite.
    """

    @workflow.run
    async def run(self, pair: PairInput) -> None:
        """Signal ``pair_done`` (both lanes completed) to the run."""
        done = PairDone(task_id=pair.task.task_id, by_class={"completed": 2})
        parent = workflow.get_external_workflow_handle(run_workflow_id(pair.run_id))
        await parent.signal("pair_done", done)
