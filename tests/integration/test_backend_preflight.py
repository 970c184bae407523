"""The Docker backend's preflight: the plan refuses, in one line, before approval."""

from __future__ import annotations

import gc
import uuid
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.plan import PlanActivities
from durabench.models.run import RunRequest
from durabench.settings.values import Settings

pytestmark = pytest.mark.docker


async def _refused(settings: Settings) -> str:
    request = RunRequest(run_id=f"pre-{uuid.uuid4().hex[:6]}", suite="pytorch", parallel=1)
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(PlanActivities(settings).plan_run, request)
    assert refused.value.non_retryable
    return refused.value.message


async def test_a_base_image_neither_here_nor_pullable_refuses_the_plan(settings: Settings) -> None:
    """A registry on a closed loopback port: the image cannot be pulled."""
    absent = settings.model_copy(update={"base_image": "127.0.0.1:9/durabench-absent:none"})
    message = await _refused(absent)
    assert message.startswith("Docker preflight: base image 127.0.0.1:9/durabench-absent:none")
    assert "\n" not in message


# docker-py leaks the socket of its failed version probe; collected inside the test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_no_docker_daemon_refuses_the_plan(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/closed.sock")
    message = await _refused(settings)
    assert message.startswith("Docker preflight: Docker Engine not reachable"), message
    gc.collect()
