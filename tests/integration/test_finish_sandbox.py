"""An attempt's end is one activity: collect the logs, remove the container, classify.

Collecting, removing and classifying always run together at an attempt's end, so they
are one activity, ``finish_sandbox``: one workflow round trip, not three. The removal must
not depend on the collect: a collect that fails loses the logs and says why, and the
container is gone all the same, unless the attempt is to be classified and its transcript
could not be read: then the container stays for the retry. The classification reads the
logs the collect copied to the host, after the container is gone.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import NoReturn

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.errors import SandboxError, non_retryable_names
from durabench.models.agent import AgentSpec
from durabench.models.attempt import (
    AttemptRef,
    ClassifyAttemptInput,
    FinishInput,
)
from durabench.models.run import TaskRef
from durabench.sandbox import DockerSandbox
from durabench.settings.values import Settings
from durabench.tasks import BUILTIN_SUITES_DIR
from tests.integration.runs import containers_of

pytestmark = pytest.mark.docker

TASK = "tensor-gelu-001"


def _ref(task_dir: Path) -> AttemptRef:
    return AttemptRef(
        run_id=f"finish-{uuid.uuid4().hex[:6]}",
        task=TaskRef(task_id=TASK, task_dir=str(task_dir)),
        lane="baseline",
        agent=AgentSpec(name="nop", model="m"),
    )


async def _provisioned(acts: SandboxActivities, ref: AttemptRef) -> None:
    env = ActivityEnvironment()
    await env.run(acts.provision_sandbox, ref)
    assert len(containers_of(ref.run_id)) == 1


async def _refused_later(settings: Settings) -> tuple[AttemptRef, SandboxActivities]:
    """A provisioned attempt whose task directory is gone since: its inputs are refused."""
    task_dir = settings.home / "suites" / "copy" / TASK
    shutil.copytree(BUILTIN_SUITES_DIR / "pytorch" / TASK, task_dir)
    ref = _ref(task_dir)
    acts = SandboxActivities(settings, "q", "test")
    await _provisioned(acts, ref)
    shutil.rmtree(task_dir)  # what the finish reads of the attempt fails now
    return ref, acts


async def test_finishing_collects_then_removes_the_container(settings: Settings) -> None:
    ref = _ref(BUILTIN_SUITES_DIR / "pytorch" / TASK)
    acts = SandboxActivities(settings, "q", "test")
    try:
        await _provisioned(acts, ref)
        out = await ActivityEnvironment().run(acts.finish_sandbox, FinishInput(ref=ref))
        assert out.collected is not None and out.collect_error == ""
        assert out.collect_started_at <= out.collect_finished_at
        assert containers_of(ref.run_id) == []
    finally:
        await acts.teardown_sandbox(ref)


async def test_a_collect_that_fails_still_removes_the_container(settings: Settings) -> None:
    ref, acts = await _refused_later(settings)
    try:
        out = await ActivityEnvironment().run(acts.finish_sandbox, FinishInput(ref=ref))
        assert out.collected is None
        assert "not a directory" in out.collect_error, out.collect_error
        assert containers_of(ref.run_id) == []  # removed all the same
    finally:
        await acts.teardown_sandbox(ref)


def _facts(ref: AttemptRef) -> ClassifyAttemptInput:
    return ClassifyAttemptInput(
        ref=ref, exit_code=0, timed_out=False, wall_seconds=1.0, files_changed=1, build_failed=False
    )


async def test_finishing_classifies_from_the_logs_it_collected(settings: Settings) -> None:
    ref = _ref(BUILTIN_SUITES_DIR / "pytorch" / TASK)
    acts = SandboxActivities(settings, "q", "test")
    env = ActivityEnvironment()
    try:
        await _provisioned(acts, ref)
        await env.run(acts.run_agent, ref)
        out = await env.run(acts.finish_sandbox, FinishInput(ref=ref, classify=_facts(ref)))
        assert out.verdict is not None and out.verdict.exit_class == "completed", out.verdict
        assert out.collected is not None and out.collect_error == ""
        assert containers_of(ref.run_id) == []
    finally:
        await acts.teardown_sandbox(ref)


async def test_a_transcript_that_cannot_be_read_keeps_the_container(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = _ref(BUILTIN_SUITES_DIR / "pytorch" / TASK)
    acts = SandboxActivities(settings, "q", "test")
    try:
        await _provisioned(acts, ref)

        async def daemon_fails(*_: object, **__: object) -> NoReturn:
            raise SandboxError("the daemon failed (injected)")

        monkeypatch.setattr(DockerSandbox, "read_tree", daemon_fails)
        monkeypatch.setattr(DockerSandbox, "read_tail", daemon_fails)
        with pytest.raises(ApplicationError, match="could not be read"):
            await ActivityEnvironment().run(
                acts.finish_sandbox, FinishInput(ref=ref, classify=_facts(ref))
            )
        assert len(containers_of(ref.run_id)) == 1  # kept for the retry to read
    finally:
        await acts.teardown_sandbox(ref)


async def test_an_attempt_refused_since_is_removed_and_not_retried(settings: Settings) -> None:
    ref, acts = await _refused_later(settings)
    try:
        with pytest.raises(ApplicationError, match="not a directory") as err:
            await ActivityEnvironment().run(
                acts.finish_sandbox, FinishInput(ref=ref, classify=_facts(ref))
            )
        assert err.value.type in non_retryable_names()  # no retry could read more
        assert containers_of(ref.run_id) == []  # so nothing is kept for one
    finally:
        await acts.teardown_sandbox(ref)
