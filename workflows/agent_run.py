"""AgentRunWorkflow: one attempt of one lane of one task, phase by phase.

    get_host_queue -> prepare_image -> provision_sandbox -> run_agent -> verify
    -> collect_artifacts, with teardown_sandbox in ``finally``; then record_attempt.

Container phases run on the host queue of the worker that owns the container. A failed
phase ends the attempt with a status and reason rather than failing the workflow: the
pair and the run go on.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar, cast

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from durabench.models import (
        AgentRunOutput,
        AttemptRef,
        AttemptResult,
        AttemptStatus,
        PhaseTiming,
        PreparedImage,
        ProvisionInput,
        ProvisionOutput,
        VerifyOutput,
    )
    from workflows.policies import HEARTBEAT, RETRY, SHORT

__all__ = ["AgentRunWorkflow"]

T = TypeVar("T")

_VERIFIER_ERRORS = ("RewardFileMissing", "RewardParseError", "VerifierError")
_SLACK = timedelta(minutes=5)


def arg_ref(arg: Any) -> AttemptRef:
    """The attempt an activity argument names (for activity summaries in the Web UI)."""
    return arg.ref if isinstance(arg, ProvisionInput) else arg


def _failure(err: ActivityError) -> tuple[AttemptStatus, str]:
    cause = err.cause
    if isinstance(cause, ApplicationError):
        status: AttemptStatus = (
            "verifier_error" if cause.type in _VERIFIER_ERRORS else ("infra_error")
        )
        return status, f"{cause.type}: {cause.message}"
    return "infra_error", str(cause or err)


@workflow.defn
class AgentRunWorkflow:
    """One attempt: id ``run/<run_id>/task/<task_id>/<lane>/<attempt>``."""

    def __init__(self) -> None:
        self.timings: list[PhaseTiming] = []
        self.host_queue = ""

    async def _phase(
        self, name: str, arg: Any, result_type: type[T], timeout: timedelta, heartbeat: bool
    ) -> T:
        started = workflow.now()
        try:
            result = await workflow.execute_activity(
                name,
                arg,
                result_type=result_type,
                task_queue=self.host_queue or None,
                start_to_close_timeout=timeout,
                heartbeat_timeout=HEARTBEAT if heartbeat else None,
                retry_policy=RETRY,
                summary=f"{name} {arg_ref(arg).task.task_id} {arg_ref(arg).lane}",
            )
            return cast(T, result)
        finally:
            self.timings.append(
                PhaseTiming(phase=name, started_at=started, finished_at=workflow.now())
            )

    @workflow.run
    async def run(self, ref: AttemptRef) -> AttemptResult:
        """Run the phases; always tear the container down; record the result."""
        self.host_queue = await workflow.execute_activity(
            "get_host_queue", result_type=str, start_to_close_timeout=SHORT, retry_policy=RETRY
        )
        fields: dict[str, Any] = {"status": "completed"}
        needs_teardown = False
        try:
            image = await self._phase(
                "prepare_image",
                ref,
                PreparedImage,
                timedelta(seconds=ref.task.build_timeout_sec) + _SLACK,
                True,
            )
            fields.update(image=image.image, dockerfile=image.dockerfile)
            needs_teardown = True
            prov = await self._phase(
                "provision_sandbox",
                ProvisionInput(ref=ref, image=image.image),
                ProvisionOutput,
                timedelta(minutes=10),
                True,
            )
            fields.update(
                instruction_file=prov.instruction_file,
                mcp_config=prov.mcp_config,
                mcp_env_missing=prov.mcp_env_missing,
            )
            fields.update(await self._agent_and_verify(ref))
        except ActivityError as err:
            fields["status"], fields["reason"] = _failure(err)
        finally:
            if needs_teardown:
                await self._collect(ref)
                await self._teardown(ref)
        return await self._record(ref, fields)

    async def _agent_and_verify(self, ref: AttemptRef) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        agent = await self._phase(
            "run_agent",
            ref,
            AgentRunOutput,
            timedelta(seconds=ref.task.agent_timeout_sec) + _SLACK,
            True,
        )
        fields.update(
            agent_exit_code=agent.exit_code,
            timed_out=agent.timed_out,
            files_changed=agent.files_changed,
        )
        if agent.timed_out:
            fields.update(status="agent_timeout", reason="killed by the time limit")
        elif agent.exit_code != 0:
            fields.update(status="agent_error", reason=f"agent exited {agent.exit_code}")
        try:
            verified = await self._phase(
                "verify",
                ref,
                VerifyOutput,
                timedelta(seconds=ref.task.verifier_timeout_sec) + _SLACK,
                True,
            )
            fields["reward"] = verified.reward
        except ActivityError as err:
            fields["status"], fields["reason"] = _failure(err)
        return fields

    async def _collect(self, ref: AttemptRef) -> None:
        """Copy logs out, best effort: a failed copy loses logs, not the attempt's result."""
        try:
            await self._phase("collect_artifacts", ref, type(None), timedelta(minutes=10), True)
        except ActivityError as err:
            workflow.logger.warning("collecting artifacts of %s failed: %s", ref.lane, err.cause)

    async def _teardown(self, ref: AttemptRef) -> None:
        await workflow.execute_activity(
            "teardown_sandbox",
            ref,
            task_queue=self.host_queue,
            start_to_close_timeout=timedelta(minutes=2),
            retry_policy=RETRY,
        )

    async def _record(self, ref: AttemptRef, fields: dict[str, Any]) -> AttemptResult:
        result = AttemptResult(
            run_id=ref.run_id,
            task_id=ref.task.task_id,
            lane=ref.lane,
            attempt=ref.attempt,
            agent=ref.agent,
            model=ref.model,
            timings=tuple(self.timings),
            **fields,
        )
        await workflow.execute_activity(
            "record_attempt", result, start_to_close_timeout=SHORT, retry_policy=RETRY
        )
        return result
