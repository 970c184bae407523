"""Runs for integration tests: to the end in-process, or detached for worker processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHandle

from durabench.models import RunOutcome, RunRequest, RunResult
from durabench.paths import RunPaths
from durabench.settings import Settings
from starter.approve import approve_main
from starter.run import main as run_main
from workflows import SuiteRunWorkflow, run_workflow_id


async def finished_run(
    request: RunRequest, client: Client, settings: Settings
) -> tuple[RunPaths, RunResult]:
    """Approve and run ``request``; it must complete. Its results directory and results."""
    outcome = await run_main(request, yes=True, client=client, settings=settings)
    assert outcome is not None and outcome.status == "completed", outcome
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    return paths, RunResult.model_validate_json(paths.results.read_text())


REPO = Path(__file__).resolve().parents[2]


def worker_process(
    settings: Settings, log: Path | None = None, **extra_env: str
) -> subprocess.Popen[bytes]:
    """``python worker.py`` for ``settings``'s server, queue and home, as its own process."""
    env = {
        **os.environ,
        "DURABENCH_HOME": str(settings.home),
        "TEMPORAL_ADDRESS": str(settings.temporal_address),
        "DURABENCH_TASK_QUEUE": settings.task_queue,
        "DURABENCH_BASE_IMAGE": settings.base_image,
        "DURABENCH_LOG_LEVEL": "warning",
        **extra_env,
    }
    if log is None:
        return subprocess.Popen([sys.executable, "worker.py"], cwd=REPO, env=env)
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "worker.py"], cwd=REPO, env=env, stdout=out, stderr=out
        )


async def approved_detached(
    request: RunRequest, client: Client, settings: Settings
) -> WorkflowHandle[Any, RunOutcome]:
    """Start ``request`` for workers elsewhere, wait for its plan, approve it."""
    await run_main(request, detach=True, client=client, settings=settings)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(request.run_id))
    while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
        await asyncio.sleep(0.2)
    await approve_main(request.run_id, "ann", client=client)
    return handle
