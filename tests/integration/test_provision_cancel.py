"""A provision cancelled midway leaves no container behind (real Docker).

The workflow tears the attempt's container down after its phases end; a provision that
reported itself cancelled while its container was still being made, or set up, left
that container to appear after the teardown. Cancelled, provision undoes its own work.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef
from durabench.models.run import TaskRef
from durabench.settings.values import Settings
from durabench.tasks import BUILTIN_SUITES_DIR
from tests.integration.runs import containers_of
from tests.workflows.harness import until

pytestmark = pytest.mark.docker

TASK = "tensor-gelu-001"


async def test_a_provision_cancelled_after_its_container_exists_removes_it(
    settings: Settings,
) -> None:
    task = TaskRef(task_id=TASK, task_dir=str(BUILTIN_SUITES_DIR / "pytorch" / TASK))
    ref = AttemptRef(
        run_id=f"cancel-{uuid.uuid4().hex[:6]}",
        task=task,
        lane="baseline",
        agent=AgentSpec(name="nop", model="m"),
    )
    acts, env = SandboxActivities(settings, "q", "test"), ActivityEnvironment()
    provision = asyncio.create_task(env.run(acts.provision_sandbox, ref))
    try:
        await until(lambda: containers_of(ref.run_id), "the container is made")
        env.cancel()
        with pytest.raises(asyncio.CancelledError):
            await provision
        assert containers_of(ref.run_id) == []  # gone once provision reported cancelled
    finally:
        await acts.teardown_sandbox(ref)
