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
    from durabench.models.pair import PairInput
    from durabench.models.results import PairResult
    from tests.workflows.fakes import completed_pair

__all__ = [
    "BareChild",
    "BareJob",
    "BareParent",
    "Shape",
    "ShapeAttempt",
    "ShapeJob",
    "ShapePair",
    "ShapeRun",
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
class Shape:
    """How many activities each level of a durabench task schedules, counted in its histories.

    Counted, not written down, so the same-shape pipeline follows the real workflows when
    their phases change (merged, or made local activities).
    """

    pair_activities: int
    """Activities a ``PairedTaskWorkflow`` schedules itself (account leases and the like)."""
    attempt_activities: int
    """Activities an ``AgentRunWorkflow`` schedules, in sequence."""
    attempt_local: int = 0
    """Local activities an ``AgentRunWorkflow`` runs (recorded as markers)."""
    pair_local: int = 0
    """Local activities a ``PairedTaskWorkflow`` runs."""


@dataclass(frozen=True)
class ShapeJob:
    """Input of :class:`ShapeRun`: the bare job plus the shape of each task."""

    tasks: int
    parallel: int
    shape: Shape


async def _steps(task: str, remote: int, local: int) -> None:
    """``remote`` activities, then ``local`` local activities, one after the other."""
    for _ in range(remote):
        await workflow.execute_activity("bare_step", task, start_to_close_timeout=_STEP)
    for _ in range(local):
        await workflow.execute_local_activity("bare_step", task, start_to_close_timeout=_STEP)


@workflow.defn
class ShapeAttempt:
    """An attempt of durabench's shape with nothing inside: its activities, in sequence."""

    @workflow.run
    async def run(self, task: str, shape: Shape) -> str:
        """Run as many trivial activities as an ``AgentRunWorkflow`` schedules."""
        await _steps(task, shape.attempt_activities, shape.attempt_local)
        return task


@workflow.defn
class ShapePair:
    """A pair of durabench's shape: its own activities, two attempt children."""

    @workflow.run
    async def run(self, task: str, shape: Shape) -> str:
        """Run the pair's activities, both attempts at once; the run hears the close."""
        await _steps(task, shape.pair_activities, shape.pair_local)
        me = workflow.info().workflow_id
        await asyncio.gather(
            *(
                workflow.execute_child_workflow(
                    ShapeAttempt.run, args=[task, shape], id=f"{me}/{lane}"
                )
                for lane in ("a", "b")
            )
        )
        return task


@workflow.defn
class ShapeRun:
    """The second yardstick: :class:`BareParent`'s window over pairs of durabench's shape."""

    def __init__(self) -> None:
        self._running = 0
        self._done = 0

    @workflow.run
    async def run(self, job: ShapeJob) -> int:
        """Start every pair in a sliding window; return how many the run heard close."""
        prefix = workflow.info().workflow_id
        children: list[asyncio.Task[str]] = []
        for i in range(job.tasks):
            await workflow.wait_condition(lambda: self._running < job.parallel)
            self._running += 1
            children.append(asyncio.create_task(self._pair(f"{prefix}/{i}", f"t{i}", job.shape)))
        await asyncio.gather(*children)
        return self._done

    async def _pair(self, child_id: str, task: str, shape: Shape) -> str:
        """One pair, counted when it closes (durabench's run counts its pairs so)."""
        try:
            return await workflow.execute_child_workflow(
                ShapePair.run, args=[task, shape], id=child_id
            )
        finally:
            self._running -= 1
            self._done += 1


@workflow.defn(name="PairedTaskWorkflow", sandboxed=False)
class StandInPair:
    """Instant pair, as in ``tests/workflows/test_history_bounds.py``: it returns at once.

    Registered under the real pair's name, so the real ``SuiteRunWorkflow`` drives it; it
    measures the run workflow alone, whose history is the only one that grows with a suite.
    """

    @workflow.run
    async def run(self, pair: PairInput) -> PairResult:
        """Both lanes completed, on their first attempts."""
        return completed_pair(pair)
