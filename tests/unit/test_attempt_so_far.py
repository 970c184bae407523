"""An attempt's typed partial result turns into the same result fields the phases found."""

from __future__ import annotations

from durabench.models.agent import AgentSpec
from durabench.models.attempt import (
    AgentRunOutput,
    AttemptRef,
    PreparedImage,
    ProvisionOutput,
    VerifyOutput,
)
from durabench.models.results import AttemptResult
from durabench.models.run import TaskRef
from durabench.models.verdict import Verdict
from workflows.attempt_so_far import AttemptSoFar, Judged

IMAGE = PreparedImage(image="img:1", dockerfile="FROM x", task_image_id="t", agent_image_id="a")
SANDBOX = ProvisionOutput(
    container_id="c", instruction_file="AGENTS.md", mcp_config=True, cli_version="1.0"
)
AGENT = AgentRunOutput(exit_code=0, timed_out=False, files_changed=2, wall_seconds=3.0, cut=("x",))


def _judged(cli_version: str | None = None) -> Judged:
    verdict = Verdict(
        exit_class="completed", reason="ok", classifier_version=3, cli_version=cli_version
    )
    return Judged(AGENT, VerifyOutput(reward=1.0), "", verdict)


def _ref() -> AttemptRef:
    task = TaskRef(task_id="t1", task_dir="/tasks/t1")
    return AttemptRef(
        run_id="r1", task=task, lane="baseline", agent=AgentSpec(name="claude-code", model="m")
    )


def _result(so_far: AttemptSoFar, cut: tuple[str, ...] = ()) -> AttemptResult:
    return so_far.result(_ref(), (), ["host-1"], cut)


def test_a_judged_attempt_carries_every_phase() -> None:
    result = _result(AttemptSoFar(IMAGE, SANDBOX, _judged()), cut=("y",))
    assert (result.image, result.instruction_file, result.mcp_config) == (
        "img:1",
        "AGENTS.md",
        True,
    )
    assert (result.exit_class, result.reward, result.files_changed) == ("completed", 1.0, 2)
    assert result.cli_version == "1.0"
    assert result.left_out == ("x", "y")
    assert (result.run_id, result.task_id, result.hosts) == ("r1", "t1", ("host-1",))


def test_the_transcript_names_the_cli_version_over_the_provisioned_one() -> None:
    assert _result(AttemptSoFar(IMAGE, SANDBOX, _judged("2.0"))).cli_version == "2.0"


def test_a_failed_phase_keeps_what_came_before_and_names_the_failure() -> None:
    result = _result(AttemptSoFar(IMAGE, failure="DockerError: gone"))
    assert (result.exit_class, result.reason) == ("infra_other", "DockerError: gone")
    assert result.image == "img:1"
    assert result.agent_exit_code is None and result.left_out == ()


def test_an_attempt_past_its_budget_scores_no_more_than_its_cap() -> None:
    verdict = Verdict(
        exit_class="model_budget", reason="over", classifier_version=3, reward_cap=0.0
    )
    judged = Judged(AGENT, VerifyOutput(reward=1.0), "", verdict)
    assert _result(AttemptSoFar(IMAGE, SANDBOX, judged)).reward == 0.0
    within = Judged(
        AGENT, VerifyOutput(reward=1.0), "", verdict.model_copy(update={"reward_cap": None})
    )
    assert _result(AttemptSoFar(IMAGE, SANDBOX, within)).reward == 1.0


def test_a_verifier_the_agent_broke_scores_zero_with_why() -> None:
    verdict = Verdict(exit_class="model_no_code", reason="no change", classifier_version=3)
    verified = VerifyOutput(reward=0.0, failure="the verifier timed out without a reward")
    result = _result(AttemptSoFar(IMAGE, SANDBOX, Judged(AGENT, verified, "", verdict)))
    assert (result.exit_class, result.reward, result.included) == ("model_no_code", 0.0, True)
    assert result.verifier_error == "the verifier timed out without a reward"


def test_a_verify_phase_the_harness_failed_is_infrastructure() -> None:
    verdict = Verdict(exit_class="completed", reason="ok", classifier_version=3)
    judged = Judged(AGENT, None, "SandboxError: container gone", verdict)
    result = _result(AttemptSoFar(IMAGE, SANDBOX, judged))
    assert (result.exit_class, result.reward, result.infra) == ("infra_other", None, True)
    assert "could not be run: SandboxError: container gone" in result.reason
