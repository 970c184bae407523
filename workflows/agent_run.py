"""AgentRunWorkflow: one attempt of one lane of one task, phase by phase.

    get_host_queue -> prepare_image -> provision_sandbox -> run_agent -> verify
    -> classify_attempt; collect_artifacts and teardown_sandbox in ``finally``;
    then record_attempt.

Container phases run on the host queue of the worker that owns the container. A failed
phase ends the attempt with an exit class (``infra_other`` for the pipeline's own
failures) rather than failing the workflow: the pair decides whether to try again.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar, cast

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from durabench.models import (
        AgentRunOutput,
        AttemptRef,
        AttemptResult,
        ClassifyAttemptInput,
        Phase,
        PhaseTiming,
        PreparedImage,
        ProvisionInput,
        ProvisionOutput,
        ServiceTarget,
        Verdict,
        VerifyOutput,
    )
    from durabench.service.payloads import EvaluateAttemptInput
    from workflows.policies import HEARTBEAT, REATTACH, RETRY, SHORT, TEARDOWN_RETRY

__all__ = ["AgentRunWorkflow", "failure_reason", "record_attempt"]

T = TypeVar("T")

_SLACK = timedelta(minutes=5)


def failure_reason(err: ActivityError) -> str:
    """``Type: message`` of the failure behind an activity error."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return f"{cause.type}: {cause.message}"
    return str(cause or err)


@workflow.defn
class AgentRunWorkflow:
    """One attempt: id ``run/<run_id>/task/<task_id>/<lane>/<attempt>``."""

    def __init__(self) -> None:
        self.timings: list[PhaseTiming] = []
        self.host_queue = ""

    async def _phase(
        self,
        name: Phase,
        arg: Any,
        result_type: type[T],
        timeout: timedelta,
        retry: RetryPolicy = RETRY,
    ) -> T:
        ref: AttemptRef = arg.ref if hasattr(arg, "ref") else arg
        started = workflow.now()
        try:
            result = await workflow.execute_activity(
                name,
                arg,
                result_type=result_type,
                task_queue=self.host_queue or None,
                start_to_close_timeout=timeout,
                heartbeat_timeout=HEARTBEAT,
                retry_policy=retry,
                summary=f"{name} · {ref.task.task_id} · {ref.lane} · attempt {ref.attempt}",
            )
            return cast(T, result)
        finally:
            self.timings.append(
                PhaseTiming(phase=name, started_at=started, finished_at=workflow.now())
            )

    @workflow.run
    async def run(self, ref: AttemptRef) -> AttemptResult:
        """Run the phases; always collect and tear the container down; record the result."""
        self.host_queue = await workflow.execute_activity(
            "get_host_queue", result_type=str, start_to_close_timeout=SHORT, retry_policy=RETRY
        )
        fields: dict[str, Any] = {}
        needs_teardown = False
        try:
            image = await self._phase(
                "prepare_image",
                ref,
                PreparedImage,
                timedelta(seconds=ref.task.build_timeout_sec) + _SLACK,
            )
            fields.update(image=image.image, dockerfile=image.dockerfile)
            needs_teardown = True
            prov = await self._phase(
                "provision_sandbox",
                ProvisionInput(ref=ref, image=image.image),
                ProvisionOutput,
                timedelta(minutes=10),
            )
            fields.update(
                instruction_file=prov.instruction_file,
                mcp_config=prov.mcp_config,
                mcp_env_missing=prov.mcp_env_missing,
            )
            fields.update(await self._agent_verify_classify(ref))
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise  # the run is being cancelled: clean up, record nothing
            fields.update(exit_class="infra_other", reason=failure_reason(err))
        finally:
            if needs_teardown:
                await self._collect(ref)
                await self._teardown(ref)
        result = await self._record(ref, fields)
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
            await workflow.execute_activity(
                "evaluate_attempt",
                data,
                start_to_close_timeout=timedelta(minutes=30),
                heartbeat_timeout=timedelta(minutes=2),
                retry_policy=RETRY,
                summary=f"grade · {ref.task.task_id} · {ref.lane} · attempt {ref.attempt}",
            )
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise
            workflow.logger.error("grading %s %s failed: %s", ref.task.task_id, ref.lane, err.cause)

    async def _agent_verify_classify(self, ref: AttemptRef) -> dict[str, Any]:
        agent = await self._phase(
            "run_agent",
            ref,
            AgentRunOutput,
            timedelta(seconds=ref.task.agent_timeout_sec) + _SLACK,
            retry=REATTACH,
        )
        fields: dict[str, Any] = {
            "agent_exit_code": agent.exit_code,
            "timed_out": agent.timed_out,
            "files_changed": agent.files_changed,
            "wall_seconds": agent.wall_seconds,
            "agent_reattached": agent.reattached,
        }
        try:
            if ref.service is None:  # a service grades after the attempt is recorded
                verified = await self._phase(
                    "verify",
                    ref,
                    VerifyOutput,
                    timedelta(seconds=ref.task.verifier_timeout_sec) + _SLACK,
                )
                fields.update(reward=verified.reward, build_failed=verified.build_failed)
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise
            fields["verifier_error"] = failure_reason(err)
        facts = ClassifyAttemptInput(
            ref=ref,
            exit_code=agent.exit_code,
            timed_out=agent.timed_out,
            wall_seconds=agent.wall_seconds,
            files_changed=agent.files_changed,
            build_failed=fields.get("build_failed", False),
        )
        verdict = await self._phase("classify_attempt", facts, Verdict, timedelta(minutes=5))
        fields.update(verdict.model_dump(include=_VERDICT_FIELDS))
        return fields

    async def _collect(self, ref: AttemptRef) -> None:
        """Copy logs out, best effort: a failed copy loses logs, not the attempt's result."""
        try:
            await self._phase("collect_artifacts", ref, type(None), timedelta(minutes=10))
        except ActivityError as err:
            workflow.logger.warning("collecting artifacts of %s failed: %s", ref.lane, err.cause)

    async def _teardown(self, ref: AttemptRef) -> None:
        try:
            await workflow.execute_activity(
                "teardown_sandbox",
                ref,
                task_queue=self.host_queue,
                start_to_close_timeout=timedelta(minutes=2),
                retry_policy=TEARDOWN_RETRY,
            )
        except ActivityError as err:
            workflow.logger.error("container %s was not removed: %s", ref.container_name, err.cause)

    async def _record(self, ref: AttemptRef, fields: dict[str, Any]) -> AttemptResult:
        return await record_attempt(ref, timings=tuple(self.timings), **fields)


async def record_attempt(ref: AttemptRef, **fields: Any) -> AttemptResult:
    """Build the attempt's result from ``fields`` and persist it (``result.json``)."""
    result = AttemptResult(
        run_id=ref.run_id,
        task_id=ref.task.task_id,
        lane=ref.lane,
        attempt=ref.attempt,
        agent=ref.agent,
        model=ref.model,
        **fields,
    )
    await workflow.execute_activity(
        "record_attempt", result, start_to_close_timeout=SHORT, retry_policy=RETRY
    )
    return result


_VERDICT_FIELDS = {
    "exit_class",
    "reason",
    "served_model",
    "tokens",
    "cost_usd",
    "signals",
    "last_message",
    "classifier_version",
}
