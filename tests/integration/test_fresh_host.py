"""A fresh host's first real-agent attempt works: provision makes the gateway's network.

The sandbox of an agent that calls a model is placed on the gateway's internal network
when it is created, and a host that has never run its gateway has no such network yet
(the gateway makes it when it starts, in the agent phase, after provision). Real Docker;
the test's own network name, removed at the end.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import docker
import docker.errors
import pytest
from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef
from durabench.models.run import TaskRef
from durabench.settings.values import Settings
from tests.integration.runs import stand_in_task

pytestmark = pytest.mark.docker

TASK = "tensor-gelu-001"


@pytest.fixture
def fresh(settings: Settings) -> Iterator[Settings]:
    """``settings`` with a gateway network of the test's own that does not exist yet."""
    name = f"durabench-test-fresh-{uuid.uuid4().hex[:8]}"
    client = docker.from_env()
    try:
        yield settings.model_copy(update={"gateway_network": name})
    finally:
        try:
            client.networks.get(name).remove()
        except docker.errors.NotFound:
            pass
        client.close()


def _networks_of(name: str) -> list[str]:
    client = docker.from_env()
    try:
        attrs = client.api.inspect_container(name)
        return sorted(attrs["NetworkSettings"]["Networks"])
    finally:
        client.close()


async def test_a_real_agent_sandbox_provisions_on_a_host_without_the_gateway_network(
    fresh: Settings,
) -> None:
    # Its image has a ``claude`` on PATH: the provision installs none (no npm here).
    claude = {"claude": "#!/bin/sh\nexit 0\n"}
    task = stand_in_task(fresh.home, "fresh", TASK, claude, {"claude": []})
    ref = AttemptRef(
        run_id=f"fresh-{uuid.uuid4().hex[:6]}",
        task=TaskRef(task_id=TASK, task_dir=str(task)),
        lane="baseline",
        agent=AgentSpec(name="claude-code", model="claude-haiku-4-5"),
    )
    acts = SandboxActivities(fresh, "q", "test")
    try:
        out = await ActivityEnvironment().run(acts.provision_sandbox, ref)
        assert out.container_id
        assert _networks_of(ref.container_name) == [fresh.gateway_network]
    finally:
        await acts.teardown_sandbox(ref)
