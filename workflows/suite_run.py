"""SuiteRunWorkflow: plan, wait for approval, run every pair in a sliding window, report.

Nothing that costs money starts before a person approves the plan: the plan activity only
reads task directories, and pairs start after the ``approve`` signal.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import CancelledError, ChildWorkflowError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from durabench.models import (
        Approval,
        PairInput,
        PairResult,
        ProgressOutput,
        RecordRunInput,
        Rejection,
        ReportInput,
        ReportOutput,
        RunOutcome,
        RunPhase,
        RunPlan,
        RunRequest,
        TaskRef,
    )
    from workflows.paired_task import PairedTaskWorkflow, pair_workflow_id
    from workflows.policies import RETRY, SHORT
    from workflows.search_attributes import RUN_STATUS

__all__ = ["SuiteRunWorkflow", "run_workflow_id"]


def run_workflow_id(run_id: str) -> str:
    """``run/<run_id>``."""
    return f"run/{run_id}"


@workflow.defn
class SuiteRunWorkflow:
    """A whole run; id ``run/<run_id>``."""

    def __init__(self) -> None:
        self._plan: RunPlan | None = None
        self._approval: Approval | None = None
        self._rejection: Rejection | None = None
        self._phase: RunPhase = "planning"
        self._running: set[str] = set()
        self._done = 0
        self._by_class: Counter[str] = Counter()
        self._excluded: dict[str, str] = {}
        self._run_id = ""

    @workflow.signal
    def approve(self, approval: Approval) -> None:
        """Approve the plan; the first approval after the plan is made counts."""
        if self._plan is None:
            workflow.logger.warning(
                "approval by %s before the plan was made: ignored", approval.approver
            )
            return
        if self._approval is None and self._rejection is None:
            self._approval = approval.model_copy(update={"approved_at": workflow.now()})

    @workflow.signal
    def reject(self, rejection: Rejection) -> None:
        """Refuse the plan: the run ends without starting anything."""
        if self._approval is None:
            self._rejection = rejection

    @workflow.query
    def plan(self) -> RunPlan | None:
        """The plan, once made."""
        return self._plan

    @workflow.query
    def progress(self) -> ProgressOutput:
        """Where the run is: phase, counts, pairs in flight."""
        return ProgressOutput(
            run_id=self._run_id,
            phase=self._phase,
            total=len(self._plan.tasks) if self._plan else 0,
            done=self._done,
            running=tuple(sorted(self._running)),
            by_class=dict(self._by_class),
            excluded=len(self._excluded),
            approved_by=self._approval.approver if self._approval else None,
            approved_at=self._approval.approved_at if self._approval else None,
        )

    def _set_phase(self, phase: RunPhase) -> None:
        self._phase = phase
        workflow.upsert_search_attributes([RUN_STATUS.value_set(phase)])

    @workflow.run
    async def run(self, request: RunRequest) -> RunOutcome:
        """Plan, wait for approval, fan out, report."""
        self._run_id = request.run_id
        self._plan = plan = await workflow.execute_activity(
            "plan_run",
            request,
            result_type=RunPlan,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=RETRY,
        )
        self._set_phase("awaiting_approval")
        await workflow.wait_condition(
            lambda: self._approval is not None or self._rejection is not None
        )
        if self._rejection is not None or self._approval is None:
            self._set_phase("rejected")
            reason = self._rejection.reason if self._rejection else "rejected"
            return RunOutcome(run_id=request.run_id, status="rejected", reason=reason)
        await workflow.execute_activity(
            "record_run",
            RecordRunInput(plan=plan, approval=self._approval),
            start_to_close_timeout=SHORT,
            retry_policy=RETRY,
        )
        self._set_phase("running")
        await self._fan_out(plan)
        self._set_phase("reporting")
        report = await workflow.execute_activity(
            "write_report",
            ReportInput(plan=plan, approval=self._approval, excluded=self._excluded),
            result_type=ReportOutput,
            start_to_close_timeout=timedelta(minutes=10),
            retry_policy=RETRY,
        )
        self._set_phase("completed")
        await workflow.wait_condition(workflow.all_handlers_finished)
        return RunOutcome(
            run_id=request.run_id,
            status="completed",
            results_dir=report.results_dir,
            report_path=report.report_path,
            lanes=report.lanes,
        )

    async def _fan_out(self, plan: RunPlan) -> None:
        """At most ``parallel`` pairs in flight; a new one starts as soon as one ends."""
        pending: list[asyncio.Task[None]] = []
        for task in plan.tasks:
            await workflow.wait_condition(lambda: len(self._running) < plan.request.parallel)
            self._running.add(task.task_id)
            pending.append(asyncio.create_task(self._run_pair(plan, task)))
        await asyncio.gather(*pending)

    async def _run_pair(self, plan: RunPlan, task: TaskRef) -> None:
        req = plan.request
        pair = PairInput(
            run_id=req.run_id,
            task=task,
            lanes=plan.lanes,
            agent=req.agent,
            model=req.model,
            agent_options=req.agent_options,
            infra_retries=req.infra_retries,
            infra_backoff_sec=req.infra_backoff_sec,
        )
        try:
            result: PairResult = await workflow.execute_child_workflow(
                PairedTaskWorkflow.run,
                pair,
                id=pair_workflow_id(req.run_id, task.task_id),
                static_summary=f"{task.task_id}: {' vs '.join(plan.lanes)}",
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            )
            self._by_class.update(a.exit_class for a in result.attempts)
            if result.excluded:
                self._excluded[task.task_id] = result.exclusion_reason
        except ChildWorkflowError as err:
            if isinstance(err.cause, CancelledError):
                raise  # the run is being cancelled
            self._excluded[task.task_id] = f"the pair's workflow failed: {err.cause}"
        finally:
            self._running.discard(task.task_id)
            self._done += 1
