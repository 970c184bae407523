"""The run's side of its spend cap: open the book, start only pairs it affords, close it.

A capped run starts its :class:`~workflows.run_spend.RunSpendWorkflow` once approved,
and asks it before each batch of pairs which may start (both lanes' expected cost must
fit: the cap never leaves half a pair). A batch it refuses waits for a pair to end; when
no pair runs and none may start, the cap is reached: the run starts no more and reports,
the pairs left listed as not run. An uncapped run passes through untouched.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities import SpendActivities
    from durabench.models.pair import PairDone
    from durabench.models.run import PlanSummary, TaskRef
    from durabench.spend import (
        PairAsk,
        SpendCarried,
        SpendProgress,
        SpendState,
        StartPairsInput,
        micros,
    )
    from durabench.spend.wire import spend_workflow_id

from workflows.cancel_check import cancel_requested, despite_cancel
from workflows.policies import RETRY, SHORT
from workflows.run_spend import RunSpendWorkflow

__all__ = ["BLOCKS", "RunSpend"]

BLOCKS = 20
"""A host is granted at least 1/BLOCKS of the cap at a time."""


class RunSpend:
    """What the run keeps of its cap: pairs ended since it last asked, and whether it stopped."""

    def __init__(self, run_id: str, carried: SpendCarried | None = None) -> None:
        """The run ``run_id``'s, as carried into this workflow run."""
        carried = carried or SpendCarried()
        self.run_id = run_id
        self.ended = dict(carried.ended)
        self.stopped = carried.stopped
        self.spent_usd = carried.spent_usd
        self.blocked_at: int | None = None
        """Pairs in flight when the book last refused one: ask again once fewer run."""

    def carry(self) -> SpendCarried:
        """What the next workflow run needs."""
        return SpendCarried(ended=dict(self.ended), stopped=self.stopped, spent_usd=self.spent_usd)

    def progress(self, plan: PlanSummary | None) -> SpendProgress:
        """What the run has spent, and its cap, for its progress."""
        cap = plan.request.max_spend_usd if plan is not None else None
        return SpendProgress(spent_usd=self.spent_usd, cap_usd=cap, stopped=self.stopped)

    async def open(self, plan: PlanSummary) -> None:
        """Start the run's book (a capped run, once approved)."""
        cap = plan.request.max_spend_usd
        if cap is None:
            return
        state = SpendState(cap=micros(cap), block=max(1, micros(cap) // BLOCKS))
        await workflow.start_child_workflow(
            RunSpendWorkflow.run,
            state,
            id=spend_workflow_id(self.run_id),
            static_summary=f"spend cap ${cap:,.2f} over every host",
            # It outlives continue-as-new; the run closes it when it reports.
            parent_close_policy=ParentClosePolicy.ABANDON,
        )

    def pair_ended(self, plan: PlanSummary | None, done: PairDone) -> None:
        """A pair closed: its cost counts; the book counts what it spent from the next ask."""
        self.spent_usd += done.cost_usd
        if plan is not None and plan.request.max_spend_usd is not None:
            self.ended[done.task_id] = micros(done.cost_usd)
            self.blocked_at = None

    def may_ask(self, running: int) -> bool:
        """Whether a pair may be asked for now (a refused one waits for a pair to end)."""
        return not self.stopped and (self.blocked_at is None or running < self.blocked_at)

    async def afford(self, plan: PlanSummary, batch: list[TaskRef], running: int) -> list[TaskRef]:
        """The first pairs of ``batch`` the cap affords (all of them: no cap)."""
        if plan.request.max_spend_usd is None or not batch:
            return batch
        high = plan.cost.session_high_usd if plan.cost is not None else None
        ask = PairAsk(
            tasks=tuple(t.task_id for t in batch),
            expected=micros(2 * (high or 0.0)),
            ended=dict(self.ended),
        )
        answer = await workflow.execute_activity_method(
            SpendActivities.start_pairs,
            StartPairsInput(run_id=self.run_id, ask=ask),
            start_to_close_timeout=SHORT,
            retry_policy=RETRY,
            summary=f"may {len(batch)} pair(s) start under the spend cap?",
        )
        # Pairs may have ended while the book answered: forget only what it was told.
        for task, amount in ask.ended.items():
            if self.ended.get(task) == amount:
                del self.ended[task]
        allowed = batch[: len(answer.started)]
        if len(allowed) < len(batch):
            self.blocked_at = running + len(allowed)
            self.stopped = self.blocked_at == 0
        return allowed

    async def run_ended(self, plan: PlanSummary | None, err: BaseException) -> None:
        """The run failed or was cancelled: its book is closed all the same.

        Not when the worker only let go of the run (an eviction cancels its tasks too):
        the run goes on elsewhere, and its book with it.
        """
        if cancel_requested() or not isinstance(err, asyncio.CancelledError):
            await despite_cancel(self.close(plan))

    async def close(self, plan: PlanSummary | None) -> None:
        """The run reports: its book is final."""
        if plan is not None and plan.request.max_spend_usd is not None:
            handle = workflow.get_external_workflow_handle(spend_workflow_id(self.run_id))
            await handle.signal(RunSpendWorkflow.close)
