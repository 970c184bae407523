"""Nothing leaked (sweep) and nothing stranded (resume), against real Docker and Temporal."""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowFailureError

from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef
from durabench.models.run import RunRequest, TaskRef
from durabench.sandbox import DockerSandbox, SandboxSpec, docker_client
from durabench.sandbox.docker.cleanup import DEPLOYMENT_LABEL, list_containers
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from runtime.client import deployment_of
from starter.approve import approve_main
from starter.resume import resume_main
from starter.run import main as run_main
from starter.sweep import sweep_main
from workflows import SuiteRunWorkflow, attempt_workflow_id, run_workflow_id

pytestmark = pytest.mark.docker


def _ref(run_id: str) -> AttemptRef:
    task = TaskRef(task_id="t1", task_dir="/nowhere")
    return AttemptRef(
        run_id=run_id, task=task, lane="baseline", agent=AgentSpec(name="nop", model="none")
    )


async def _container(settings: Settings, ref: AttemptRef, deployment: str) -> DockerSandbox:
    labels = {**ref.labels, DEPLOYMENT_LABEL: deployment}
    sandbox = DockerSandbox(
        SandboxSpec(name=ref.container_name, image=settings.base_image, labels=labels)
    )
    await sandbox.start()
    return sandbox


def _names() -> set[str]:
    client = docker_client()
    try:
        return {c.name for c in list_containers(client)}
    finally:
        client.close()


async def test_sweep_removes_only_containers_whose_attempt_is_not_running(
    client: Client, settings: Settings
) -> None:
    orphan, live = _ref(f"gone-{uuid.uuid4().hex[:6]}"), _ref(f"live-{uuid.uuid4().hex[:6]}")
    live_wf = attempt_workflow_id(live.run_id, "t1", "baseline", 1)
    handle = await client.start_workflow(
        "AgentRunWorkflow", live, id=live_wf, task_queue=f"nobody-{uuid.uuid4().hex[:6]}"
    )
    deployment = await deployment_of(client)  # a sweep takes only its deployment's
    boxes = [
        await _container(settings, orphan, deployment),
        await _container(settings, live, deployment),
    ]
    try:
        # Other runs' leftovers may be swept too; these two must go the right way.
        listed = await sweep_main(dry_run=True, client=client)
        assert orphan.container_name in listed and live.container_name not in listed
        assert {orphan.container_name, live.container_name} <= _names()
        removed = await sweep_main(client=client)
        assert orphan.container_name in removed and live.container_name not in removed
        names = _names()
        assert orphan.container_name not in names and live.container_name in names
    finally:
        await handle.terminate("test over")
        for box in boxes:
            await box.stop(delete=True)


async def test_resume_finishes_a_run_whose_worker_never_came(
    client: Client, settings: Settings
) -> None:
    source = load_suite("pytorch")[2]
    shutil.copytree(source.task_dir, settings.home / "suites" / "one" / source.task_id)
    request = RunRequest(
        run_id=f"res-{uuid.uuid4().hex[:6]}", suite="one", agent=AgentSpec(name="nop")
    )
    await run_main(request, detach=True, client=client, settings=settings)  # no worker runs
    with pytest.raises(asyncio.TimeoutError):
        handle = client.get_workflow_handle_for(
            SuiteRunWorkflow.run, run_workflow_id(request.run_id)
        )
        await asyncio.wait_for(handle.query(SuiteRunWorkflow.progress), timeout=2)
    resumed = asyncio.create_task(resume_main(request.run_id, client=client, settings=settings))
    while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
        await asyncio.sleep(0.2)
    await approve_main(request.run_id, "ann", client=client)
    outcome = await resumed
    assert outcome.status == "completed"
    assert [s.attempts for s in outcome.lanes] == [1, 1]


async def test_cancelling_a_run_removes_its_running_containers(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    source = load_suite("pytorch")[2]
    shutil.copytree(source.task_dir, settings.home / "suites" / "one" / source.task_id)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"cases": [{"duration_sec": 600}]}))
    request = RunRequest(
        run_id=f"cancel-{uuid.uuid4().hex[:6]}",
        suite="one",
        agent=AgentSpec(name="replay", options={"plan": str(plan)}),
    )
    run = asyncio.create_task(run_main(request, yes=True, client=client, settings=settings))
    while len(_running(request.run_id)) < 2:
        await asyncio.sleep(0.5)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(request.run_id))
    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await run
    for _ in range(60):  # "within a few seconds", bounded
        if not _running(request.run_id, every=True):
            break
        await asyncio.sleep(0.5)
    assert _running(request.run_id, every=True) == []


def _running(run_id: str, every: bool = False) -> list[str]:
    client = docker_client()
    try:
        found = client.containers.list(all=every, filters={"label": f"durabench.run={run_id}"})
        return [c.name for c in found]
    finally:
        client.close()
