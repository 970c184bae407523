"""PairedTaskWorkflow: both lanes of one task, side by side, symmetric.

Both arms start at once. An arm whose attempt ends ``infra_*`` gets a new attempt after a
durable backoff, so an infra failure in one lane never turns into a lopsided pair; an arm
that exhausts its retries leaves the pair excluded, not scored. While the run is paused no
retry attempt starts; the attempts already running finish.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    ChildWorkflowError,
    FailureError,
)
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from activities import AccountActivities
    from durabench.agents import agent_class
    from durabench.models.accounts import (
        STATING_APIS,
        AwaitLeaseInput,
        Lease,
        LeaseGrant,
        LeaseRequest,
        ReleaseRequest,
    )
    from durabench.models.attempt import AttemptRef
    from durabench.models.pair import (
        PAIR_ENDED,
        ArmProgress,
        PairDone,
        PairInput,
        PairProgress,
    )
    from durabench.models.results import AttemptResult, PairResult

from workflows.agent_run import UNRECORDED, AgentRunWorkflow, failure_reason
from workflows.attempt_record import record_attempt, save_result
from workflows.cancel_check import stop_if_cancelled
from workflows.dropped import being_dropped
from workflows.ids import attempt_workflow_id, pair_workflow_id
from workflows.policies import (
    BUSY_POLL_MAX,
    COOLING_POLL,
    DEFAULT_COOLDOWN,
    HEARTBEAT,
    POOL_RETRY,
    SHORT,
)
from workflows.run_details import pair_details
from workflows.search_attributes import for_attempt

__all__ = ["PairedTaskWorkflow", "attempt_workflow_id", "pair_workflow_id"]


BUSY_WAIT = timedelta(hours=1)
"""How long one ``await_lease`` asks before it answers busy (the arm then looks again)."""


def _cancelled(err: BaseException) -> bool:
    """Whether ``err`` is this workflow's cancellation.

    Directly, or through a child or an activity (an arm cancelled while it leases).
    """
    if isinstance(err, asyncio.CancelledError):
        return True
    cause = err.cause if isinstance(err, ChildWorkflowError | ActivityError) else None
    return isinstance(cause, CancelledError)


@workflow.defn
class PairedTaskWorkflow:
    """One task, every lane of the plan; id ``run/<run_id>/task/<task_id>``."""

    def __init__(self) -> None:
        self._task_id = ""
        self._arms: dict[str, ArmProgress] = {}
        self._paused = False
        self._control_seq = 0

    @workflow.signal
    def pause(self, seq: int = 0) -> None:
        """Sent by the run when it is paused: no retry attempt starts until ``resume``.

        ``seq`` orders the run's pause and resume signals, which the server may deliver out
        of order: an older one than the last taken is ignored.
        """
        self._set_paused(True, seq)

    @workflow.signal
    def resume(self, seq: int = 0) -> None:
        """Sent by the run when it is resumed (``seq`` as for ``pause``)."""
        self._set_paused(False, seq)

    def _set_paused(self, paused: bool, seq: int) -> None:
        if seq >= self._control_seq:
            self._control_seq, self._paused = seq, paused

    @workflow.query
    def progress(self) -> PairProgress:
        """Each arm: its attempt, and whether it runs or waits to retry."""
        return PairProgress(task_id=self._task_id, arms=tuple(self._arms.values()))

    @workflow.run
    async def run(self, pair: PairInput) -> PairResult:
        """Run every arm to a non-infra end or to the end of its retries."""
        self._task_id = pair.task.task_id
        self._set_paused(pair.paused, pair.control_seq)  # a newer signal may have come first
        arms = await self._settled_arms(pair)
        exhausted = [arm[-1] for arm in arms if arm[-1].infra]
        return PairResult(
            task_id=pair.task.task_id,
            attempts=tuple(a for arm in arms for a in arm),
            excluded=bool(exhausted),
            exclusion_reason="; ".join(
                f"{a.lane} ended {a.exit_class} on attempt {a.attempt}: {a.reason}"
                for a in exhausted
            ),
        )

    async def _settled_arms(self, pair: PairInput) -> list[list[AttemptResult]]:
        """Every arm's attempts, once every arm has ended.

        Cancelled, the pair closes cancelled only after both lanes are torn down. An arm
        that failed leaves the other to finish its session; then the pair fails with a
        :data:`PAIR_ENDED` error whose details say what the other arm did, so the run
        counts the pair excluded from the pair's own close.
        """
        task_id = pair.task.task_id
        ended = await asyncio.gather(
            *(self._arm(pair, lane) for lane in pair.lanes), return_exceptions=True
        )
        failures = [e for e in ended if isinstance(e, BaseException)]
        if not failures:
            return [arm for arm in ended if not isinstance(arm, BaseException)]
        cancelled = [e for e in failures if _cancelled(e)]
        if cancelled:  # the pair closes cancelled: its run counts it so
            raise cancelled[0]
        first = failures[0]
        if not isinstance(first, FailureError):  # a bug: fail the task, not the pair
            raise first
        done = [a for arm in ended if not isinstance(arm, BaseException) for a in arm]
        by_class = dict(Counter(a.exit_class for a in done))
        raise ApplicationError(
            f"an arm failed: {first}",
            PairDone(task_id=task_id, by_class=by_class, excluded=True),
            type=PAIR_ENDED,
        ) from first

    async def _arm(self, pair: PairInput, lane: str) -> list[AttemptResult]:
        results: list[AttemptResult] = []
        for attempt in range(1, pair.infra_retries + 2):
            ref = AttemptRef(
                run_id=pair.run_id,
                task=pair.task,
                lane=lane,
                attempt=attempt,
                agent=pair.agent,
                service=pair.service,
                budget_tokens=pair.budget_tokens,
                spend_capped=pair.spend_capped,
                prices=pair.prices,
            )
            self._set_arm(ArmProgress(lane=lane, attempt=attempt, state="running"))
            if pair.accounts:
                results.append(await self._attempt_on_account(ref, pair.lease_poll_sec))
            else:
                results.append(await self._attempt(ref))
            # An attempt may end on its own as the cancel comes: no retry after it.
            stop_if_cancelled(f"{lane} attempt {attempt + 1}")
            last = results[-1].exit_class
            if not results[-1].infra or results[-1].session_began:
                break  # a verdict, or a session that ran: a retry would pay for it again
            if attempt > pair.infra_retries:
                break
            backoff = pair.infra_backoff_sec * 2 ** (attempt - 1)
            self._set_arm(
                ArmProgress(
                    lane=lane,
                    attempt=attempt + 1,
                    state="backoff",
                    last_class=last,
                    retry_at=workflow.now() + timedelta(seconds=backoff),
                )
            )
            retry = f"{lane}: retry (attempt {attempt + 1}) after {last}, backoff {backoff:g} s"
            await workflow.sleep(backoff, summary=retry)
            if self._paused:
                self._set_arm(self._arms[lane].model_copy(update={"state": "paused"}))
                await workflow.wait_condition(lambda: not self._paused)
        done = results[-1].exit_class
        self._set_arm(ArmProgress(lane=lane, attempt=len(results), state="done", last_class=done))
        return results

    async def _attempt_on_account(self, ref: AttemptRef, poll_sec: float) -> AttemptResult:
        """Lease an account slot, run the attempt on it, give the slot back.

        An attempt that hit the account's usage cap cools the account until the cap
        resets, so the arm's retry leases another one (or waits for this one).
        """
        try:
            lease = await self._lease(ref, poll_sec)
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise
            reason = f"no agent account could be leased: {failure_reason(err)}"
            return await record_attempt(ref, exit_class="infra_auth", reason=reason)
        ref = ref.model_copy(update={"account": lease.account_id})
        self._set_arm(ArmProgress(lane=ref.lane, attempt=ref.attempt, state="running"))
        result: AttemptResult | None = None
        try:
            stop_if_cancelled(f"{ref.lane} attempt {ref.attempt} on {lease.account_id}")
            result = await self._attempt(ref)
            return result
        finally:
            if not being_dropped():  # dropped by its worker, the pair still holds the slot
                await self._release(lease, result)

    async def _lease(self, ref: AttemptRef, poll_sec: float) -> Lease:
        """A lease from the pool; while none is free, durable waits the progress shows.

        Every slot in use: ask again after about ``poll_sec``, doubling up to
        :data:`BUSY_POLL_MAX` (jittered, so waiting arms do not ask in step). Every
        account cooling: wait for the first to come back. Every account blocked: ask
        now and then (a sync may fix it). A paused run's arms do not ask.
        """
        info = workflow.info()
        label = f"{ref.task.task_id} · {ref.lane} · attempt {ref.attempt}"
        api = agent_class(ref.agent.name).model_api
        req = LeaseRequest(
            agent=ref.agent.name,
            model=ref.agent.model if api else "",
            paced=api in STATING_APIS,
            holder_workflow_id=info.workflow_id,
            holder_run_id=info.run_id,
            label=label,
            lease_id=str(workflow.uuid4()),  # a retried lease_account gets the same lease
        )
        note, busy = "asking the account pool", 0
        while True:
            self._waiting(ref, note, None)
            grant = await workflow.execute_activity_method(
                AccountActivities.lease_account,
                req,
                start_to_close_timeout=SHORT,
                retry_policy=POOL_RETRY,
                summary=f"lease an account · {label}",
            )
            if grant.busy and grant.lease is None:
                grant = await self._await_lease(ref, req, poll_sec, grant.why, label)
            if grant.lease is not None:
                return grant.lease
            note = grant.why
            self._waiting(ref, note, grant.wait_until)
            if grant.wait_until is not None:
                wait = min(grant.wait_until - workflow.now(), COOLING_POLL)
            elif grant.busy:  # backs off, so a long wait keeps the history small
                busy += 1
                wait = min(timedelta(seconds=poll_sec * 2 ** min(busy - 1, 10)), BUSY_POLL_MAX)
                wait *= workflow.random().uniform(0.5, 1.5)
            else:
                wait = COOLING_POLL
            await workflow.sleep(
                max(wait, timedelta(seconds=1)), summary=f"wait for an account · {label}"
            )
            if self._paused:
                self._set_arm(self._arms[ref.lane].model_copy(update={"state": "paused"}))
                await workflow.wait_condition(lambda: not self._paused)

    async def _await_lease(
        self, ref: AttemptRef, req: LeaseRequest, poll_sec: float, why: str, label: str
    ) -> LeaseGrant:
        """Ask from one activity until a slot is free; a pause stops the asking.

        A lease granted as the pause came is the same lease (same ``lease_id``) the arm
        gets when it asks again after ``resume``.
        """
        self._waiting(ref, why, None)
        asking = workflow.start_activity_method(
            AccountActivities.await_lease,
            AwaitLeaseInput(
                request=req,
                poll_sec=poll_sec,
                max_poll_sec=BUSY_POLL_MAX.total_seconds(),
                max_wait_sec=BUSY_WAIT.total_seconds(),
            ),
            start_to_close_timeout=BUSY_WAIT + SHORT,
            heartbeat_timeout=HEARTBEAT,
            retry_policy=POOL_RETRY,
            summary=f"wait for a free slot · {label}",
        )
        await workflow.wait_condition(lambda: asking.done() or self._paused)
        if not asking.done():
            asking.cancel()
        try:
            grant: LeaseGrant = await asking
        except ActivityError as err:
            if not isinstance(err.cause, CancelledError) or not self._paused:
                raise
            grant = LeaseGrant(busy=True, why="the run was paused while the arm waited")
        if self._paused:  # ask again (the same lease) once the run is resumed
            self._set_arm(self._arms[ref.lane].model_copy(update={"state": "paused"}))
            await workflow.wait_condition(lambda: not self._paused)
            return LeaseGrant(busy=True, why=grant.why)
        return grant

    def _waiting(self, ref: AttemptRef, note: str, until: datetime | None) -> None:
        self._set_arm(
            ArmProgress(
                lane=ref.lane,
                attempt=ref.attempt,
                state="waiting_account",
                retry_at=until,
                note=note,
            )
        )

    def _set_arm(self, arm: ArmProgress) -> None:
        """Where the arm is now, in the progress query and the Web UI's current details."""
        self._arms[arm.lane] = arm
        workflow.set_current_details(pair_details(self._arms.values()))

    async def _release(self, lease: Lease, result: AttemptResult | None) -> None:
        """Give the slot back; a usage cap cools the account until the cap resets.

        A rate limit cools it too, until the time the API named (through the gateway):
        a retry on the same account sooner would only be refused again.
        """
        capped = result is not None and result.exit_class == "infra_usage_cap"
        cool_until = None
        if capped and result is not None:  # one that names no reset time still cools
            cool_until = result.cap_resets_at or workflow.now() + DEFAULT_COOLDOWN
        elif (
            result is not None
            and result.exit_class == "infra_rate_limit"
            and result.cap_resets_at is not None
        ):
            capped, cool_until = True, result.cap_resets_at
        req = ReleaseRequest(
            lease_id=lease.lease_id,
            cool_until=cool_until,
            cause=f"{lease.label}: {result.reason}" if capped and result else "",
        )
        try:
            await workflow.execute_activity_method(
                AccountActivities.release_account,
                req,
                start_to_close_timeout=SHORT,
                retry_policy=POOL_RETRY,
                summary=f"release {lease.account_id} · {lease.label}",
            )
        except ActivityError as err:  # the pool reclaims it when this pair ends
            workflow.logger.warning("lease %s not released: %s", lease.lease_id, err.cause)
            if isinstance(err.cause, CancelledError):
                raise  # the pair is being cancelled: no further attempt

    async def _unrecorded(self, ref: AttemptRef, failure: ApplicationError) -> AttemptResult:
        """The attempt ended, judged, but its result could not be written: try once more.

        Its result (the verdict of a session that may have cost money) stays the pair's
        either way, in its history and its own result.
        """
        result = AttemptResult.model_validate(failure.details[0])
        try:
            await save_result(ref, result)
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise
            workflow.logger.error(
                "result.json of %s %s attempt %d not written (%s); its verdict, %s, is kept "
                "in the pair's history",
                ref.task.task_id,
                ref.lane,
                ref.attempt,
                err.cause,
                result.exit_class,
            )
        return result

    async def _attempt(self, ref: AttemptRef) -> AttemptResult:
        try:
            return await workflow.execute_child_workflow(
                AgentRunWorkflow.run,
                ref,
                id=attempt_workflow_id(ref.run_id, ref.task.task_id, ref.lane, ref.attempt),
                static_summary=f"{ref.task.task_id} · {ref.lane} · attempt {ref.attempt}",
                search_attributes=for_attempt(ref),
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            )
        except ChildWorkflowError as err:
            if isinstance(err.cause, ApplicationError) and err.cause.type == UNRECORDED:
                return await self._unrecorded(ref, err.cause)
            if isinstance(err.cause, CancelledError):
                if workflow.cancellation_reason() is not None:
                    raise  # the run is being cancelled: no new attempt
                reason = "the attempt was cancelled on its own (by an operator); its pair goes on"
                return await record_attempt(ref, exit_class="infra_other", reason=reason)
            return await record_attempt(
                ref, exit_class="infra_other", reason=f"the attempt's workflow failed: {err.cause}"
            )
