"""What an attempt's phases have found so far, typed, and the result it comes to.

``AgentRunWorkflow`` fills one in phase by phase; whatever the attempt came to (judged,
failed, moved to another host and begun again), :meth:`AttemptSoFar.result` turns it into
its ``AttemptResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durabench.models.attempt import (
        AgentRunOutput,
        AttemptRef,
        ClassifyAttemptInput,
        PreparedImage,
        ProvisionOutput,
        VerifyOutput,
    )
    from durabench.models.results import AttemptResult, PhaseTiming
    from durabench.models.verdict import Verdict

__all__ = ["AttemptSoFar", "Judged", "Ran", "attempt_result"]


def attempt_result(ref: AttemptRef, **fields: Any) -> AttemptResult:
    """The attempt's result: its identity from ``ref``, the rest from ``fields``."""
    return AttemptResult(
        run_id=ref.run_id,
        task_id=ref.task.task_id,
        lane=ref.lane,
        attempt=ref.attempt,
        agent=ref.agent.name,
        model=ref.agent.model,
        account=ref.account,
        **fields,
    )


_VERDICT_FIELDS = {
    "exit_class",
    "reason",
    "served_model",
    "tokens",
    "cost_usd",
    "cli_cost_usd",
    "unpriced_model",
    "signals",
    "last_message",
    "classifier_version",
    "cap_resets_at",
}


@dataclass(frozen=True)
class Judged:
    """The agent's run, the verifier's word on it and the classifier's verdict.

    Kept together: the run's facts count only once the attempt is classified.
    ``verifier_error`` is why the verify phase failed: only the harness's own steps fail it
    (the agent's failures in the tests score 0.0), so the attempt is infrastructure.
    """

    agent: AgentRunOutput
    verified: VerifyOutput | None
    verifier_error: str
    verdict: Verdict

    def fields(self) -> dict[str, Any]:
        """The ``AttemptResult`` fields of the run, its verification and its verdict."""
        fields: dict[str, Any] = {
            "agent_exit_code": self.agent.exit_code,
            "timed_out": self.agent.timed_out,
            "files_changed": self.agent.files_changed,
            "wall_seconds": self.agent.wall_seconds,
            "agent_reattached": self.agent.reattached,
        }
        if self.verified is not None:
            reward, cap = self.verified.reward, self.verdict.reward_cap
            if reward is not None and cap is not None:  # no score for work past the budget
                reward = min(reward, cap)
            fields.update(reward=reward, build_failed=self.verified.build_failed)
            if self.verified.failure:  # the agent's: scored 0.0, the reason kept
                fields["verifier_error"] = self.verified.failure
        fields.update(self.verdict.model_dump(include=_VERDICT_FIELDS))
        if self.verifier_error:  # the harness could not run the tests: infrastructure
            fields.update(
                verifier_error=self.verifier_error,
                exit_class="infra_other",
                reason=f"the tests could not be run: {self.verifier_error}",
                session_began=True,  # it ran, paid for: not run again
            )
        if self.verdict.cli_version:  # the transcript's word over ``--version``'s
            fields["cli_version"] = self.verdict.cli_version
        return fields


@dataclass(frozen=True)
class Ran:
    """The agent's run and the verifier's word, awaiting the verdict ``finish_sandbox`` gives.

    ``facts`` are what the classifier is told besides the logs it reads.
    """

    agent: AgentRunOutput
    verified: VerifyOutput | None
    verifier_error: str
    facts: ClassifyAttemptInput

    def judged(self, verdict: Verdict) -> Judged:
        """The run, judged."""
        return Judged(self.agent, self.verified, self.verifier_error, verdict)


@dataclass
class AttemptSoFar:
    """The phases' outputs as they come in; ``failure`` when a phase ended the attempt."""

    image: PreparedImage | None = None
    sandbox: ProvisionOutput | None = None
    judged: Judged | None = None
    ran: Ran | None = None
    """Set once the agent and the tests ran, until the verdict judges it."""
    launched: bool = False
    """The agent phase began: from here a session may be running, and paid for."""
    session_over: bool = False
    """The harness saw the session end without a verdict (its process died unrecorded, its
    sandbox is gone), or saw that it never launched (its run was cancelled): running it
    again is the only way to a verdict."""
    failure: str | None = None

    def fields(self, collected_cut: tuple[str, ...] = ()) -> dict[str, Any]:
        """The ``AttemptResult`` fields found; ``collected_cut``: what collecting left out."""
        fields: dict[str, Any] = {}
        if self.image is not None:
            fields.update(
                image=self.image.image,
                dockerfile=self.image.dockerfile,
                task_image_id=self.image.task_image_id,
                agent_image_id=self.image.agent_image_id,
            )
        if self.sandbox is not None:
            fields.update(
                instruction_file=self.sandbox.instruction_file,
                mcp_config=self.sandbox.mcp_config,
                mcp_env_missing=self.sandbox.mcp_env_missing,
                cli_version=self.sandbox.cli_version,
            )
        if self.judged is not None:
            fields.update(self.judged.fields())
        if self.failure is not None:
            fields.update(exit_class="infra_other", reason=self.failure)
            if self.launched and not self.session_over:
                fields["session_began"] = True
        left_out = (*(self.judged.agent.cut if self.judged else ()), *collected_cut)
        if left_out:
            fields["left_out"] = left_out
        return fields

    def result(
        self,
        ref: AttemptRef,
        timings: tuple[PhaseTiming, ...],
        hosts: list[str],
        collected_cut: tuple[str, ...] = (),
    ) -> AttemptResult:
        """The attempt's result: its phases' timings, its hosts, what collecting left out."""
        fields = self.fields(collected_cut)
        fields["hosts"] = tuple(hosts)
        return attempt_result(ref, timings=timings, **fields)
