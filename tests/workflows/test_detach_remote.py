"""``starter run --detach`` against a remote Temporal needs no Docker on this machine."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from temporalio.client import Client, WorkflowExecutionStatus

from workflows import run_workflow_id

REPO = Path(__file__).resolve().parents[2]


def _run(temporal_address: str, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": temporal_address,
        "DOCKER_HOST": f"unix://{home}/no-docker-here.sock",
        "DURABENCH_HOME": str(home),
        "DURABENCH_TASK_QUEUE": f"remote-{uuid.uuid4().hex[:8]}",  # no worker polls it
    }
    return subprocess.run(
        [sys.executable, "-m", "starter", "run", "--suite", "pytorch", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_detached_run_starts_without_local_docker(
    client: Client, temporal_address: str, tmp_path: Path
) -> None:
    attached = _run(temporal_address, tmp_path, "--run-id", f"r-{uuid.uuid4().hex[:6]}")
    assert attached.returncode != 0 and "Docker Engine not reachable" in attached.stderr

    run_id = f"r-{uuid.uuid4().hex[:6]}"
    detached = _run(temporal_address, tmp_path, "--run-id", run_id, "--detach")
    assert detached.returncode == 0, detached.stderr
    assert "Detached" in detached.stdout and run_id in detached.stdout
    # No worker has planned it yet: what to start, and to read the plan before approving.
    said = " ".join(detached.stdout.split())
    assert "planned once a worker runs" in said and f"starter status {run_id}" in said
    handle = client.get_workflow_handle(run_workflow_id(run_id))
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    await handle.terminate("test done: no worker will plan it")
