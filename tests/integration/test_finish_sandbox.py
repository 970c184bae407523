"""An attempt's end is one activity: collect the logs, then remove the container (real Docker).

``finish_sandbox`` replaced ``collect_artifacts`` followed by ``teardown_sandbox`` (two
workflow round trips at every attempt's end). The removal must not depend on the collect:
a collect that fails loses the logs and says why, and the container is gone all the same.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef, ProvisionInput
from durabench.models.run import TaskRef
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
    image = (await env.run(acts.prepare_image, ref)).image
    await env.run(acts.provision_sandbox, ProvisionInput(ref=ref, image=image))
    assert len(containers_of(ref.run_id)) == 1


async def test_finishing_collects_then_removes_the_container(settings: Settings) -> None:
    ref = _ref(BUILTIN_SUITES_DIR / "pytorch" / TASK)
    acts = SandboxActivities(settings, "q", "test")
    try:
        await _provisioned(acts, ref)
        out = await ActivityEnvironment().run(acts.finish_sandbox, ref)
        assert out.collected is not None and out.collect_error == ""
        assert out.collect_started_at <= out.collect_finished_at
        assert containers_of(ref.run_id) == []
    finally:
        await acts.teardown_sandbox(ref)


async def test_a_collect_that_fails_still_removes_the_container(settings: Settings) -> None:
    task_dir = settings.home / "suites" / "copy" / TASK
    shutil.copytree(BUILTIN_SUITES_DIR / "pytorch" / TASK, task_dir)
    ref = _ref(task_dir)
    acts = SandboxActivities(settings, "q", "test")
    try:
        await _provisioned(acts, ref)
        shutil.rmtree(task_dir)  # the attempt's inputs are refused now: the collect fails
        out = await ActivityEnvironment().run(acts.finish_sandbox, ref)
        assert out.collected is None
        assert "not a directory" in out.collect_error, out.collect_error
        assert containers_of(ref.run_id) == []  # removed all the same
    finally:
        await acts.teardown_sandbox(ref)
