"""A sweep takes only its own deployment's orphans: a Docker host may serve several.

Two users on one Docker daemon, each with their own Temporal (their own home, their own
embedded server), must not remove each other's running sandboxes: to one user's server
the other's workflows do not exist. Containers carry their deployment (namespace and the
server's cluster id); a sweep looks at its own deployment's containers only.

The first sweep is a dry run: on code that swept every deployment it removes nothing of
anyone else's while it fails.
"""

from __future__ import annotations

import uuid

import pytest
from temporalio.api.workflowservice.v1 import GetClusterInfoRequest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef
from durabench.models.run import TaskRef
from durabench.sandbox import DockerSandbox, SandboxSpec
from durabench.settings.values import Settings
from starter.sweep import sweep_main

pytestmark = pytest.mark.docker

DEPLOYMENT = "durabench.deployment"
"""The label, spelled out: this test must fail (not break) on code that lacks it."""


def _ref(run_id: str) -> AttemptRef:
    task = TaskRef(task_id="t1", task_dir="/nowhere")
    return AttemptRef(
        run_id=run_id, task=task, lane="baseline", agent=AgentSpec(name="nop", model="none")
    )


async def test_a_sweep_leaves_another_deployments_containers_alone(
    client: Client, settings: Settings
) -> None:
    cluster = await client.workflow_service.get_cluster_info(GetClusterInfoRequest())
    ours = f"{client.namespace}@{cluster.cluster_id}"
    mine, theirs = _ref(f"mine-{uuid.uuid4().hex[:6]}"), _ref(f"theirs-{uuid.uuid4().hex[:6]}")
    boxes = []
    for ref, deployment in ((mine, ours), (theirs, f"default@{uuid.uuid4()}")):
        labels = {**ref.labels, DEPLOYMENT: deployment}
        spec = SandboxSpec(name=ref.container_name, image=settings.base_image, labels=labels)
        boxes.append(DockerSandbox(spec))
        await boxes[-1].start()
    try:
        # Neither attempt's workflow exists on this server; only ours is this sweep's.
        listed = await sweep_main(dry_run=True, client=client)
        assert mine.container_name in listed and theirs.container_name not in listed
        removed = await sweep_main(client=client)
        assert mine.container_name in removed and theirs.container_name not in removed
    finally:
        for box in boxes:
            await box.stop(delete=True)
