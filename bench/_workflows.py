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

__all__ = [
    "BareChild",
    "BareJob",
    "BareParent",
    "ShapedAttempt",
    "ShapedJob",
    "ShapedPair",
    "ShapedParent",
    "StandInPair",
]

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


@dataclass(frozen=True)
class ShapedJob:
    """Input of :class:`ShapedParent`: durabench's shape per task, counted from its history."""

    tasks: int
    parallel: int
    activities: int
    """Activities an attempt schedules, one after the other."""
    local_activities: int
    """Local activities an attempt runs after them."""


@workflow.defn
class ShapedAttempt:
    """An attempt's shape: its activities in sequence, then its local ones; nothing done."""

    @workflow.run
    async def run(self, job: ShapedJob) -> None:
        """Run ``bare_step`` as many times as an attempt runs phases."""
        for _ in range(job.activities):
            await workflow.execute_activity("bare_step", "a", start_to_close_timeout=_STEP)
        for _ in range(job.local_activities):
            await workflow.execute_local_activity("bare_step", "a", start_to_close_timeout=_STEP)


@workflow.defn
class ShapedPair:
    """A pair's shape: two attempt children at once, then a ``pair_done`` signal to the run."""

    @workflow.run
    async def run(self, job: ShapedJob) -> None:
        """Run both lanes' attempts, then tell the parent."""
        me = workflow.info()
        await asyncio.gather(
            *(
                workflow.execute_child_workflow(
                    ShapedAttempt.run, job, id=f"{me.workflow_id}/{lane}"
                )
                for lane in ("baseline", "mcp")
            )
        )
        assert me.parent is not None
        await workflow.get_external_workflow_handle(me.parent.workflow_id).signal("pair_done")


@workflow.defn
class ShapedParent:
    """The same-shape yardstick: a window of pairs as the run keeps, counted by signal."""

    def __init__(self) -> None:
        self._running = 0
        self._done = 0

    @workflow.signal
    def pair_done(self) -> None:
        """A pair ended (durabench's pairs tell their run the same way)."""
        self._done += 1

    @workflow.run
    async def run(self, job: ShapedJob) -> int:
        """Start every pair in a sliding window; return how many told their end."""
        prefix = workflow.info().workflow_id
        children: list[asyncio.Task[None]] = []
        for i in range(job.tasks):
            await workflow.wait_condition(lambda: self._running < job.parallel)
            self._running += 1
            children.append(asyncio.create_task(self._pair(f"{prefix}/{i}", job)))
        await asyncio.gather(*children)
        await workflow.wait_condition(lambda: self._done == job.tasks)
        return self._done

    async def _pair(self, child_id: str, job: ShapedJob) -> None:
        try:
            await workflow.execute_child_workflow(ShapedPair.run, job, id=child_id)
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
