"""SuiteRunWorkflow: plan, wait for approval, run every pair in a sliding window, report.

Nothing that costs money starts before a person approves the plan: the plan activity only
reads task directories, and pairs start after an approval that matches the plan (the
``approve`` update refuses a mismatched one at the caller; the signal of the same name, for
the Web UI and the ``temporal`` CLI, logs and ignores it). A run nobody approves ends itself
after ``approval_timeout_sec``.

Live control: ``pause`` / ``resume`` (no new pair or retry starts; running ones finish) and
``set_parallel`` (signal, and update with a validator).

History stays bounded at any suite size: the task list is read from the plan file a page
at a time, pairs are abandoned children whose close the run hears
(:mod:`workflows.pair_ends`), and after ``pairs_per_run`` starts (or when Temporal
suggests it) the run continues as new, carrying only counters and the ids of pairs in
flight.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities import PlanActivities, ResultActivities
    from durabench.models.pair import PairDone, PairInput
    from durabench.models.run import Approval, Control, PlanSummary, Rejection, TaskRef
    from durabench.models.suite_run import (
        CarriedState,
        PlanPageInput,
        ProgressOutput,
        RecordRunInput,
        ReportInput,
        RunOutcome,
        RunPhase,
        SuiteRunInput,
    )
    from durabench.planning.approval import approval_mismatches, approval_progress

from workflows.cancel_check import cancel_requested, stop_if_cancelled
from workflows.ids import pair_workflow_id, run_workflow_id
from workflows.pair_control import cancel_pairs, service_scores, tell_pairs
from workflows.pair_ends import (
    CARRIED_GROUP,
    Watches,
    watch_carried,
    watch_child,
    watch_interrupted,
)
from workflows.paired_task import PairedTaskWorkflow
from workflows.policies import RETRY, SHORT, WATCH_RETRY
from workflows.run_details import (
    approval_summary,
    current_details,
    ended_by,
    page_summary,
    plan_summary,
)
from workflows.run_messages import SIGNALS, refusal, who
from workflows.search_attributes import RUN_STATUS, for_plan
from workflows.spend_gate import RunSpend

__all__ = ["PAGE_SIZE", "SuiteRunWorkflow", "run_workflow_id"]

PAGE_SIZE = 100
"""Tasks read from the plan per ``plan_page`` call."""


@workflow.defn
class SuiteRunWorkflow:
    """A whole run; id ``run/<run_id>``."""

    @workflow.init
    def __init__(self, data: SuiteRunInput) -> None:
        self._plan: PlanSummary | None = None
        self._approval: Approval | None = None
        self._rejection: Rejection | None = None
        self._phase: RunPhase = "planning"
        self._running: set[str] = set()
        self._done = 0
        self._by_class: Counter[str] = Counter()
        self._excluded = 0
        self._run_id = data.request.run_id
        self._spend = RunSpend(self._run_id, data.carried.spend if data.carried else None)
        self._paused = False
        self._control_seq = 0
        self._parallel = data.request.parallel or 0  # 0: the plan derives it
        self._start = 0
        self._ended_abnormally: list[str] = []
        self._watches = Watches()  # the waits for pairs to close, beside the main task
        self._note = ""  # who paused the run and why, or why it ended
        self._deadline: datetime | None = None
        self._approve_signals = 0  # approve signals received, to find the taken one's sender
        self._approval_signal: int | None = None
        if data.carried is not None:
            # Restored before any handler runs: a signal in the first activation sees the
            # pairs in flight (pause and resume are passed on to them).
            self._start = self._restore(data.carried)

    @workflow.signal(description=SIGNALS["approve"])
    def approve(self, approval: Approval | None = None) -> None:
        """Approve the plan; the first matching approval after the plan is made counts.

        No input at all (the Web UI's Submit with the input left empty) approves as planned.
        """
        self._approve_signals += 1
        self._consider(approval or Approval(), signal_number=self._approve_signals)

    def _consider(self, approval: Approval, signal_number: int | None) -> None:
        """Take ``approval`` if it is the first to match the plan.

        ``signal_number``: which ``approve`` signal carried it, so that its sender can be
        looked up in history; ``None`` for the update and an approval given at start.
        """
        if self._plan is None:
            workflow.logger.warning("approval by %s before the plan: ignored", approval.approver)
            return
        problems = approval_mismatches(self._plan, approval)
        if problems:
            workflow.logger.warning(
                "approval by %s refused: %s", approval.approver, "; ".join(problems)
            )
            return
        if self._approval is None and self._rejection is None:
            self._approval = approval.model_copy(update={"approved_at": workflow.now()})
            self._approval_signal = signal_number

    @workflow.update(name="approve", description=SIGNALS["approve"])
    def approve_checked(self, approval: Approval) -> Approval:
        """Approve the plan, or fail at the caller with the reason (see the validator)."""
        self._consider(approval, signal_number=None)
        if self._approval is None:  # unreachable after the validator; kept as a guard
            raise ApplicationError("the approval was not taken", non_retryable=True)
        return self._approval

    @approve_checked.validator
    def _check_approval(self, approval: Approval) -> None:
        why = refusal(self._run_id, self._plan, self._rejection, self._approval, approval)
        if why:
            raise ApplicationError(why)

    @workflow.signal(description=SIGNALS["reject"])
    def reject(self, rejection: Rejection) -> None:
        """Refuse the plan: the run ends without starting anything."""
        if self._approval is None:
            self._rejection = rejection

    def _pair_ended(self, done: PairDone) -> None:
        """A pair closed (it may have been started by an earlier run of this workflow).

        Heard once per pair from its close (:mod:`workflows.pair_ends`); one that could not
        say how it ended (terminated, timed out) is excluded and named as such.
        """
        if done.task_id not in self._running:
            return
        self._running.discard(done.task_id)
        self._done += int(not done.cancelled)
        self._by_class.update(done.by_class)
        self._excluded += int(done.excluded)
        self._spend.pair_ended(self._plan, done)
        if done.unexplained:
            workflow.logger.error("pair %s ended unexplained: %s", done.task_id, done.unexplained)
            self._ended_abnormally.append(done.task_id)
        self._show()

    @workflow.signal(description=SIGNALS["pause"])
    async def pause(self, control: Control | None = None) -> None:
        """No new pair or attempt starts until ``resume``; running attempts finish."""
        if not self._paused:
            self._paused = True
            workflow.logger.info("paused by %s: %s", *who(control))
            self._note = "{}: {}".format(*who(control))
            self._show()
            self._control_seq += 1
            await tell_pairs(self._run_id, self._running, "pause", self._control_seq)

    @workflow.signal(description=SIGNALS["resume"])
    async def resume(self, control: Control | None = None) -> None:
        """Undo ``pause``."""
        if self._paused:
            self._paused = False
            workflow.logger.info("resumed by %s: %s", *who(control))
            self._show()
            self._control_seq += 1
            await tell_pairs(self._run_id, self._running, "resume", self._control_seq)

    @workflow.signal(name="set_parallel", description=SIGNALS["set_parallel"])
    def set_parallel_signal(self, parallel: int) -> None:
        """Change the number of pairs in flight (a value below 1 is logged and ignored)."""
        if parallel < 1:
            workflow.logger.warning("set_parallel %s ignored: it must be at least 1", parallel)
            return
        self._parallel = parallel
        self._show()

    @workflow.update(name="set_parallel")
    def set_parallel(self, parallel: int) -> int:
        """Change the number of pairs in flight; returns the previous value.

        More slots start pairs at once; fewer let running pairs finish and start none until
        the number in flight is below the new limit. While the plan is being made the
        previous value is 0 when the plan is to derive it; the value set here stands.
        """
        previous, self._parallel = self._parallel, parallel
        self._show()
        return previous

    @set_parallel.validator
    def _check_parallel(self, parallel: int) -> None:
        if parallel < 1:
            raise ApplicationError(f"parallel must be at least 1, not {parallel}")

    @workflow.query
    def plan(self) -> PlanSummary | None:
        """The plan, once made."""
        return self._plan

    @workflow.query
    def progress(self) -> ProgressOutput:
        """Where the run is: phase, counts, pairs in flight."""
        return ProgressOutput(
            run_id=self._run_id,
            phase=self._phase,
            total=self._plan.task_count if self._plan else 0,
            done=self._done,
            running=tuple(sorted(self._running)),
            by_class=dict(self._by_class),
            excluded=self._excluded,
            **approval_progress(self._approval),
            paused=self._paused,
            parallel=self._parallel,
            ended_abnormally=tuple(self._ended_abnormally),
            spend=self._spend.progress(self._plan),
        )

    def _set_phase(self, phase: RunPhase, status: str | None = None) -> None:
        """Enter ``phase``; ``DurabenchRunStatus`` says ``status``, by default the phase."""
        self._phase = phase
        workflow.upsert_search_attributes([RUN_STATUS.value_set(status or phase)])
        self._show()

    def _show(self) -> None:
        """Say in the run's current details (Web UI) where it is and what to do."""
        details = current_details(
            self.progress(), self._plan, note=self._note, deadline=self._deadline
        )
        workflow.set_current_details(details)

    @workflow.run
    async def run(self, data: SuiteRunInput) -> RunOutcome:
        """Plan, wait for approval, fan out (continuing as new as needed), report.

        A run that fails or is cancelled says so in its status and details.
        """
        self._show()
        try:
            return await self._run(data)
        except (Exception, asyncio.CancelledError) as err:  # not continue-as-new
            # An eviction cancels too: its status is refused by the SDK, and dropped.
            cancelled = isinstance(err, asyncio.CancelledError)
            cancelled |= workflow.cancellation_reason() is not None
            self._note = "the run was cancelled" if cancelled else ended_by(err)
            self._set_phase("cancelled" if cancelled else "failed")
            await self._spend.run_ended(self._plan, err)
            raise

    async def _run(self, data: SuiteRunInput) -> RunOutcome:
        start = self._start
        if data.carried is None:
            rejected = await self._plan_and_approve(data)
            if rejected is not None:
                return rejected
        else:
            in_flight, running = data.carried.in_flight, lambda: self._running
            for at in range(0, len(in_flight), CARRIED_GROUP):  # each group its own wait
                group = in_flight[at : at + CARRIED_GROUP]
                self._watches.start(watch_carried(self._run_id, group, running, self._pair_ended))
        self._set_phase("running")
        try:
            resume_at = await self._fan_out(start)
            if resume_at is not None:
                await workflow.wait_condition(workflow.all_handlers_finished)
                carried = self._carry(resume_at)
                workflow.continue_as_new(data.model_copy(update={"carried": carried}))
            await workflow.wait_condition(lambda: not self._running or self._watches.failed)
            self._watches.raise_if_failed(self._run_id, self._running)
        except (Exception, asyncio.CancelledError):
            if cancel_requested():
                await cancel_pairs(self._run_id, lambda: self._running)
            raise
        return await self._report()

    async def _plan_and_approve(self, data: SuiteRunInput) -> RunOutcome | None:
        request = data.request
        self._plan = await workflow.execute_activity_method(
            PlanActivities.plan_run,
            request,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=RETRY,
            summary=plan_summary(request),
        )
        workflow.upsert_search_attributes(for_plan(self._plan))
        if not self._parallel:  # neither --parallel nor set_parallel while planning
            self._parallel = self._plan.parallel
        self._deadline = workflow.now() + timedelta(seconds=request.approval_timeout_sec)
        self._set_phase("awaiting_approval")
        if request.approved_by is not None:
            self._consider(Approval(approver=request.approved_by), signal_number=None)
        decided = lambda: self._approval is not None or self._rejection is not None  # noqa: E731
        timeout = timedelta(seconds=request.approval_timeout_sec)
        try:
            await workflow.wait_condition(
                decided, timeout=timeout, timeout_summary=approval_summary(self._plan, timeout)
            )
        except TimeoutError:
            reason = f"nobody approved the plan within {timeout}; plan the run again"
            self._note = reason
            self._set_phase("expired")
            return RunOutcome(run_id=request.run_id, status="expired", reason=reason)
        if self._approval is None:
            rejection = self._rejection
            reason = rejection.reason if rejection else "rejected"
            self._note = f"by {rejection.rejected_by}: {reason}" if rejection else reason
            self._set_phase("rejected")
            return RunOutcome(run_id=request.run_id, status="rejected", reason=reason)
        by = self._approval.approver
        if self._approval_signal is not None and by == Approval().approver:
            by = "the sender of signal `approve` (read from history)"
        self._approval = await workflow.execute_activity_method(
            PlanActivities.record_run,
            RecordRunInput(
                plan=self._plan, approval=self._approval, signal_number=self._approval_signal
            ),
            start_to_close_timeout=SHORT,
            retry_policy=RETRY,
            summary=f"approved by {by}: write run.json",
        )
        await self._spend.open(self._plan)
        return None

    def _restore(self, carried: CarriedState) -> int:
        self._plan, self._approval = carried.plan, carried.approval
        self._done, self._excluded = carried.done, carried.excluded
        self._by_class = Counter(carried.by_class)
        self._running = set(carried.in_flight)
        self._paused = carried.paused
        self._control_seq = carried.control_seq
        self._parallel = carried.parallel or carried.plan.parallel
        self._ended_abnormally = list(carried.ended_abnormally)
        return carried.next_index

    def _carry(self, next_index: int) -> CarriedState:
        if self._plan is None or self._approval is None:
            raise RuntimeError("cannot continue as new before the plan is approved")
        return CarriedState(
            plan=self._plan,
            approval=self._approval,
            next_index=next_index,
            done=self._done,
            by_class=dict(self._by_class),
            excluded=self._excluded,
            in_flight=tuple(sorted(self._running)),
            paused=self._paused,
            control_seq=self._control_seq,
            parallel=self._parallel,
            ended_abnormally=tuple(self._ended_abnormally),
            spend=self._spend.carry(),
        )

    async def _fan_out(self, start: int) -> int | None:
        """Start pairs from task ``start``, at most ``parallel`` in flight.

        Returns:
            Where the next workflow run must go on, or ``None`` once every pair started.
        """
        plan = self._plan
        if plan is None:
            raise RuntimeError("no plan")
        req, index, started = plan.request, start, 0
        while index < plan.task_count:
            page = await workflow.execute_activity_method(
                PlanActivities.plan_page,
                PlanPageInput(run_id=req.run_id, offset=index, limit=PAGE_SIZE),
                start_to_close_timeout=SHORT,
                retry_policy=RETRY,
                summary=page_summary(index, PAGE_SIZE, plan.task_count),
            )
            pending = list(page.tasks)
            while pending:
                await workflow.wait_condition(
                    lambda: (
                        (not self._paused and len(self._running) < self._parallel)
                        and self._spend.may_ask(len(self._running))
                        or self._watches.failed
                    )
                )
                self._watches.raise_if_failed(self._run_id, self._running)
                stop_if_cancelled(f"pairs from task {index}")
                room = self._parallel - len(self._running)
                batch = pending[: min(room, req.pairs_per_run - started)]
                batch = await self._spend.afford(plan, batch, len(self._running))
                if self._spend.stopped:  # the cap is reached: the rest are not run
                    return None
                del pending[: len(batch)]
                # Every free slot is filled in one workflow task: starting pairs one at a
                # time would cost a round trip each and cap a run at a few pairs a second.
                await asyncio.gather(*(self._start_pair(plan, task) for task in batch))
                index, started = index + len(batch), started + len(batch)
                suggested = workflow.info().is_continue_as_new_suggested()
                if index < plan.task_count and (started >= req.pairs_per_run or suggested):
                    return index
        return None

    async def _start_pair(self, plan: PlanSummary, task: TaskRef) -> None:
        req = plan.request
        pair = PairInput.of_plan(plan, task, paused=self._paused, control_seq=self._control_seq)
        self._running.add(task.task_id)
        self._show()
        try:
            handle = await workflow.start_child_workflow(
                PairedTaskWorkflow.run,
                pair,
                id=pair_workflow_id(req.run_id, task.task_id),
                static_summary=f"{task.task_id}: {' vs '.join(plan.lanes)}",
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                # Pairs outlive continue-as-new; cancelling the run cancels them explicitly.
                parent_close_policy=ParentClosePolicy.ABANDON,
            )
        except asyncio.CancelledError:  # the run was cancelled while the start was in flight
            if cancel_requested():  # not evicted: the worker carrying on starts it
                self._watches.start(watch_interrupted(req.run_id, task.task_id, self._pair_ended))
            raise
        self._watches.start(watch_child(task.task_id, handle, self._pair_ended))
        seq = self._control_seq
        if seq != pair.control_seq:
            await handle.signal("pause" if self._paused else "resume", seq)

    async def _report(self) -> RunOutcome:
        self._set_phase("reporting")
        await self._spend.close(self._plan)
        if self._plan is not None and self._plan.request.service is not None:
            await service_scores(self._plan.request.service, self._run_id, self._plan.lanes)
        report = await workflow.execute_activity_method(
            ResultActivities.write_report,
            ReportInput(run_id=self._run_id, approval=self._approval),
            start_to_close_timeout=timedelta(minutes=10),
            retry_policy=WATCH_RETRY,
            summary=f"results.json, report.md, report.html; pairs done: {self._done}",
        )
        total = self._plan.task_count if self._plan else 0
        measured = self._excluded < total
        headline = report.story  # the sentence every report opens with
        self._note = headline
        # Listed apart: in the Web UI a green COMPLETED alone looks like a good run.
        self._set_phase("completed", status="completed" if measured else "nothing_measured")
        await workflow.wait_condition(workflow.all_handlers_finished)
        return RunOutcome(
            run_id=self._run_id,
            status="completed",
            results_dir=report.results_dir,
            report_path=report.report_path,
            lanes=report.lanes,
            not_run=report.not_run,
            continue_command=report.continue_command,
            approved_by=self._approval.approver if self._approval else None,
            measured=measured,
            headline=headline,
        )
