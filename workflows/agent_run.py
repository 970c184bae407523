"""AgentRunWorkflow: one attempt of one lane of one task, phase by phase.

    claim_host -> provision_sandbox (the image built or found, the container started)
    -> run_agent -> verify;
    finish_sandbox in ``finally`` (collect the logs, remove the container, and classify
    the attempt from the logs collected, if it ran); then record_attempt.

Container phases run on the host queue of the worker that claimed the attempt (a host
admits only as many attempts as it has room for). If no worker takes the host's work for
``host_timeout_sec`` (schedule-to-start), the host is gone: the attempt claims a host again
and, on another host, starts over in a fresh container; the hosts it used are recorded.
A failed phase ends the attempt with an exit class (``infra_other`` for the pipeline's own
failures) rather than failing the workflow: the pair decides whether to try again.

"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Literal, TypeVar, cast

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    FailureError,
    TimeoutError,
    TimeoutType,
)
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from activities import SandboxActivities, ServiceActivities
    from activities.run_cancel import RUN_CANCELLED
    from durabench.errors import AgentLost, SandboxGone
    from durabench.models.attempt import (
        AttemptRef,
        ClassifyAttemptInput,
        CollectOutput,
        FinishInput,
        HostClaim,
    )
    from durabench.models.benchmark_service import ServiceTarget
    from durabench.models.results import AttemptResult, Phase, PhaseTiming
    from durabench.service.payloads import EvaluateAttemptInput

from workflows.attempt_record import attempt_label, save_result
from workflows.attempt_so_far import AttemptSoFar, Ran
from workflows.cancel_check import despite_cancel, stop_if_cancelled
from workflows.dropped import being_dropped
from workflows.policies import (
    AFTER_AGENT,
    AFTER_AGENT_BOUND,
    CLAIM_RETRY,
    HEARTBEAT,
    MAX_LOSSES,
    MAX_MOVES,
    REATTACH,
    RETRY,
    SHORT,
    TEARDOWN_RETRY,
)
from workflows.search_attributes import for_result

__all__ = [
    "UNRECORDED",
    "AgentRunWorkflow",
    "failure_reason",
    "host_lost",
    "session_over",
]

A = TypeVar("A")
OnCancel = Literal["stop", "go on", "finish"]
"""What a phase does when the attempt is asked to cancel (see ``AgentRunWorkflow._phase``)."""
T = TypeVar("T")

_SESSION_OVER = (AgentLost.__name__, SandboxGone.__name__, RUN_CANCELLED)
"""Failures that prove the session ended unjudged, or never launched (its run was
cancelled or had ended): the pair may run the attempt again."""
UNRECORDED = "AttemptUnrecorded"
"""Type of the failure of an attempt whose result could not be written; its detail is the
result (the verdict is kept, and a session that ran is not run again)."""
_SLACK = timedelta(minutes=5)
_PROVISION = timedelta(minutes=10)
"""What the start of a sandbox may take besides its image's build."""


def host_lost(err: ActivityError) -> bool:
    """Whether no worker took the activity from its host queue in time: the host is gone."""
    cause = err.cause
    return isinstance(cause, TimeoutError) and cause.type == TimeoutType.SCHEDULE_TO_START


def session_over(err: ActivityError) -> bool:
    """Whether the failure proves the agent's session ended without a verdict."""
    cause = err.cause
    return isinstance(cause, ApplicationError) and cause.type in _SESSION_OVER


def failure_reason(err: FailureError) -> str:
    """``Type: message`` of the failure behind an activity error (or of a local one's)."""
    cause = err.cause if isinstance(err, ActivityError) else err
    if isinstance(cause, ApplicationError):
        return f"{cause.type}: {cause.message}"
    return str(cause or err)


@workflow.defn
class AgentRunWorkflow:
    """One attempt: id ``run/<run_id>/task/<task_id>/<lane>/<attempt>``."""

    def __init__(self) -> None:
        self.timings: list[PhaseTiming] = []
        self.host_queue = ""
        self.host_timeout: timedelta | None = None
        self.hosts: list[str] = []
        self.left_behind: list[workflow.ActivityHandle[None]] = []
        self.current_placement = 0
        self.losses = 0

    @workflow.query
    def placement(self) -> int:
        """The attempt's current placement (0 unless it moved).

        Containers of an older placement are leftovers of a lost host: a sweep removes them.
        """
        return self.current_placement

    async def _phase(
        self,
        phase: Callable[[SandboxActivities, A], Awaitable[T]],
        arg: A,
        timeout: timedelta,
        retry: RetryPolicy = RETRY,
        bound: timedelta | None = None,
        detail: str = "",
        timed: bool = True,
        on_cancel: OnCancel = "stop",
    ) -> T:
        """Run one container phase on the attempt's host, as ``on_cancel`` says.

        ``"stop"``: a cancel asks the activity to stop and waits for it; a phase that ends
        although the attempt was asked to cancel (its activity did not hear the ask in
        time) raises ``asyncio.CancelledError`` after it: nothing paid follows a cancel.
        ``"go on"``: the same ask, but a phase that ended anyway is followed as usual (an
        agent session that ran is paid for: its tests and verdict follow). ``"finish"``:
        the activity is not asked; it runs to its end (the tests and the close-out of a
        session that ran, the removal of a container).
        """
        ref = cast(AttemptRef, getattr(arg, "ref", arg))
        name = cast(Phase, phase.__name__)  # each sandbox activity is named for its method
        detail = f"{detail} on {self._host()}" if self.host_queue else detail
        started = workflow.now()
        try:
            running = workflow.start_activity_method(
                phase,
                arg,
                task_queue=self.host_queue or None,
                schedule_to_start_timeout=self.host_timeout,
                start_to_close_timeout=timeout,
                schedule_to_close_timeout=bound,
                heartbeat_timeout=HEARTBEAT,
                retry_policy=retry,
                cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
                summary=f"{attempt_label(ref)} · {detail}",
            )
            out = await (despite_cancel(running) if on_cancel == "finish" else running)
        finally:
            if timed and not being_dropped():
                self.timings.append(
                    PhaseTiming(phase=name, started_at=started, finished_at=workflow.now())
                )
        if on_cancel == "stop":
            stop_if_cancelled(f"what follows {name}")
        return out

    @workflow.run
    async def run(self, ref: AttemptRef) -> AttemptResult:
        """Run the phases; always collect and tear the container down; record the result."""
        return await self._run_placed(ref)

    async def _claim(self, ref: AttemptRef) -> HostClaim:
        """A slot on a host with room.

        Cancelled, it waits for the claim's answer: a slot the claim took is then known,
        and released by the attempt's cleanup rather than left to its expiry.
        """
        claim = await workflow.execute_activity_method(
            SandboxActivities.claim_host,
            ref,
            start_to_close_timeout=SHORT,
            retry_policy=CLAIM_RETRY,
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"{attempt_label(ref)} · a host with room",
        )
        self.host_queue = claim.queue
        self.host_timeout = timedelta(seconds=claim.host_timeout_sec)
        if not self.hosts or self.hosts[-1] != claim.host_id:
            self.hosts.append(claim.host_id)
        return claim

    async def _run_placed(self, ref: AttemptRef) -> AttemptResult:
        """Claim a host with room; start over on another when the host disappears.

        Cleanup (collect, remove the container, release the host's slot) runs once a
        host was claimed, however the attempt ends; not when the worker merely lets go of
        the workflow (see :mod:`workflows.dropped`): the worker that carries on cleans up.
        """
        so_far = AttemptSoFar()
        collected: CollectOutput | None = None
        try:
            await self._claim(ref)
            stop_if_cancelled("the first phase")
            while True:
                try:
                    await self._phases(ref, so_far)
                    break
                except ActivityError as err:
                    if not host_lost(err) or self.losses >= MAX_LOSSES:
                        raise
                    if ref.placement >= MAX_MOVES:
                        raise
                    self.losses += 1
                    ref = await self._move(ref)
                    so_far = AttemptSoFar()  # the phases run again and fill it in anew
        except ActivityError as err:
            if isinstance(err.cause, CancelledError) or not self.hosts:
                raise  # cancelled: clean up, record nothing; no host: the claim failed
            so_far.failure = failure_reason(err)
            so_far.session_over = session_over(err)
        finally:
            if not being_dropped():  # the attempt ended: clean up now, and only now
                if self.hosts:
                    collected = await self._finish_sandbox(ref, so_far)
                await self._forget_left_behind()
        cut = collected.cut if collected else ()
        return await self._finish(ref, so_far.result(ref, self._timings(), self.hosts, cut))

    async def _move(self, ref: AttemptRef) -> AttemptRef:
        """The host is gone: claim one again; on another host start over, fresh."""
        lost, lost_queue = self.hosts[-1], self.host_queue
        claim = await self._claim(ref)
        if claim.queue == lost_queue:
            workflow.logger.warning("host %s is back; %s carries on there", lost, ref.lane)
            stop_if_cancelled(f"carrying on on {lost}")
            return ref  # every phase is idempotent: it picks up where it was
        workflow.logger.warning(
            "host %s disappeared: %s %s attempt %d starts over on %s",
            lost,
            ref.task.task_id,
            ref.lane,
            ref.attempt,
            claim.host_id,
        )
        self.left_behind.append(
            workflow.start_activity_method(
                SandboxActivities.teardown_sandbox,
                ref,
                task_queue=lost_queue,
                schedule_to_start_timeout=self.host_timeout,
                start_to_close_timeout=timedelta(minutes=2),
                retry_policy=TEARDOWN_RETRY,
                summary=f"{attempt_label(ref)} · remove {ref.container_name} on lost host {lost}",
            )
        )
        self.current_placement = ref.placement + 1
        stop_if_cancelled(f"starting over on {claim.host_id}")
        return ref.model_copy(update={"placement": self.current_placement})

    async def _forget_left_behind(self) -> None:
        """Wait for the lost hosts' teardowns: done if a host came back, logged if not."""
        for handle in self.left_behind:
            try:
                await handle
            except ActivityError as err:
                workflow.logger.warning(
                    "a container was left on a lost host (its worker sweeps it when it "
                    "returns; `python -m starter sweep` removes it from anywhere): %s",
                    err.cause,
                )

    async def _phases(self, ref: AttemptRef, so_far: AttemptSoFar) -> None:
        """Provision (the image too), run, verify; ``so_far`` fills in as they go."""
        build = ref.task.build_timeout_sec
        sandbox = so_far.sandbox = await self._phase(
            SandboxActivities.provision_sandbox,
            ref,
            timedelta(seconds=build) + _SLACK + _PROVISION,
            detail=f"{ref.container_name} from the image of {ref.task.task_id} "
            f"(built within {build:g} s if absent)",
        )
        so_far.image = sandbox.image
        self._split_provision(sandbox.image_ready_at)
        await self._agent_and_verify(ref, so_far)

    def _split_provision(self, ready_at: datetime | None) -> None:
        """Time the image and the start apart, as two phases, where the image was ready.

        The line is the worker's clock, held within the activity's span on the
        workflow's: a result's phases follow each other whatever the clocks say.
        """
        whole = self.timings.pop()
        ready = min(max(ready_at or whole.started_at, whole.started_at), whole.finished_at)
        self.timings += [
            PhaseTiming(phase="prepare_image", started_at=whole.started_at, finished_at=ready),
            whole.model_copy(update={"started_at": ready}),
        ]

    async def _finish(self, ref: AttemptRef, result: AttemptResult) -> AttemptResult:
        """Record the attempt, then have the service grade it if one does.

        A record that gave up (the results store down for hours) fails the workflow with
        the result itself (``AttemptUnrecorded``): the pair keeps the verdict and tries
        the record again, rather than take the failure for an attempt to run again.
        """
        try:
            await save_result(ref, result, local=True)
        except FailureError as err:  # a local activity's failure is not an ActivityError
            if isinstance(err, CancelledError) or isinstance(err.cause, CancelledError):
                raise
            raise ApplicationError(
                f"result.json of {attempt_label(ref)} could not be written: {failure_reason(err)}",
                result,
                type=UNRECORDED,
                non_retryable=True,
            ) from err
        workflow.upsert_search_attributes(for_result(result))
        if ref.service is not None:
            await self._grade(ref, ref.service)
        return result

    async def _grade(self, ref: AttemptRef, service: ServiceTarget) -> None:
        """Grade through the service (``eval.json``); a failure leaves the attempt ungraded.

        An ungraded task is sent as missing in the lane's final score, and ``starter score``
        grades it again later; the attempt itself, paid for, is kept either way.
        """
        data = EvaluateAttemptInput(
            service=service,
            run_id=ref.run_id,
            task_id=ref.task.task_id,
            lane=ref.lane,
            attempt=ref.attempt,
        )
        try:
            await workflow.execute_activity_method(
                ServiceActivities.evaluate_attempt,
                data,
                start_to_close_timeout=timedelta(minutes=30),
                heartbeat_timeout=timedelta(minutes=2),
                retry_policy=RETRY,
                summary=f"{attempt_label(ref)} · grade at {service.url}",
            )
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise
            workflow.logger.error("grading %s %s failed: %s", ref.task.task_id, ref.lane, err.cause)

    async def _agent_and_verify(self, ref: AttemptRef, so_far: AttemptSoFar) -> None:
        """Run the agent and the tests; ``finish_sandbox`` classifies the attempt after."""
        so_far.launched = True
        agent = await self._phase(
            SandboxActivities.run_agent,
            ref,
            timedelta(seconds=ref.task.agent_timeout_sec) + _SLACK,
            retry=REATTACH,
            bound=timedelta(seconds=ref.task.agent_timeout_sec) + AFTER_AGENT_BOUND,
            on_cancel="go on",
            detail=f"{ref.agent.name} · {ref.agent.model} · "
            f"time limit {ref.task.agent_timeout_sec:g} s",
        )
        verified, verifier_error = None, ""
        try:
            if ref.service is None:  # a service grades after the attempt is recorded
                verified = await self._phase(
                    SandboxActivities.verify,
                    ref,
                    timedelta(seconds=ref.task.verifier_timeout_sec) + _SLACK,
                    retry=AFTER_AGENT,
                    bound=timedelta(seconds=ref.task.verifier_timeout_sec) + AFTER_AGENT_BOUND,
                    on_cancel="finish",
                    detail=f"tests/test.sh, time limit {ref.task.verifier_timeout_sec:g} s",
                )
        except ActivityError as err:
            if isinstance(err.cause, CancelledError) or host_lost(err):
                raise  # a lost host is the attempt's to handle, not the verifier's verdict
            verifier_error = failure_reason(err)
        so_far.ran = Ran(
            agent,
            verified,
            verifier_error,
            ClassifyAttemptInput(
                ref=ref,
                exit_code=agent.exit_code,
                timed_out=agent.timed_out,
                wall_seconds=agent.wall_seconds,
                files_changed=agent.files_changed,
                build_failed=verified.build_failed if verified else False,
            ),
        )

    async def _finish_sandbox(self, ref: AttemptRef, so_far: AttemptSoFar) -> CollectOutput | None:
        """Collect the logs (best effort), remove the container, classify: one activity.

        The collect keeps its phase timing (timed on the host); a failed collect loses
        logs, not the attempt's result, and never leaves the container behind. An attempt
        whose agent ran is classified there, from the logs collected; that retries for
        hours (the agent has run: giving up would have the pair pay for a new session),
        and should it give up, the container is removed on its own.
        """
        ran = so_far.ran
        try:
            out = await self._phase(
                SandboxActivities.finish_sandbox,
                FinishInput(ref=ref, classify=ran.facts if ran else None),
                timedelta(minutes=12),
                retry=AFTER_AGENT if ran else TEARDOWN_RETRY,
                bound=AFTER_AGENT_BOUND if ran else None,
                detail=f"logs and patch of {ref.container_name}, then remove it"
                + (", classify the attempt" if ran else ""),
                timed=False,
                on_cancel="finish",
            )
        except ActivityError as err:
            if ran is None:
                workflow.logger.error(
                    "container %s was not removed: %s", ref.container_name, err.cause
                )
                return None
            so_far.failure = f"the attempt could not be classified: {failure_reason(err)}"
            await self._teardown(ref)
            return None
        if out.collect_error:
            workflow.logger.warning(
                "collecting artifacts of %s failed: %s", ref.lane, out.collect_error
            )
        if ran is not None and out.verdict is not None:
            so_far.judged = ran.judged(out.verdict)
        self.timings.append(
            PhaseTiming(
                phase="collect_artifacts",
                started_at=out.collect_started_at,
                finished_at=out.collect_finished_at,
            )
        )
        return out.collected

    async def _teardown(self, ref: AttemptRef) -> None:
        """Remove the container on its own: what a finish that gave up left behind."""
        try:
            await workflow.execute_activity_method(
                SandboxActivities.teardown_sandbox,
                ref,
                task_queue=self.host_queue,
                schedule_to_start_timeout=self.host_timeout,
                start_to_close_timeout=timedelta(minutes=2),
                retry_policy=TEARDOWN_RETRY,
                summary=f"{attempt_label(ref)} · remove {ref.container_name} on {self._host()}",
            )
        except ActivityError as err:
            workflow.logger.error("container %s was not removed: %s", ref.container_name, err.cause)

    def _host(self) -> str:
        """The host the attempt runs on (its queue until a claim names it)."""
        return self.hosts[-1] if self.hosts else self.host_queue

    def _timings(self) -> tuple[PhaseTiming, ...]:
        return tuple(self.timings)
