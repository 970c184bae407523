"""Exact resume: kill -9 the worker mid-session; a new worker finishes without re-running it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import docker
import pytest
from temporalio.client import Client

from durabench.models import RunRequest, RunResult
from durabench.paths import RunPaths
from durabench.settings import Settings
from durabench.tasks import load_suite
from starter.approve import approve_main
from starter.run import main as run_main
from workflows import SuiteRunWorkflow, run_workflow_id

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
SESSION = [
    {"type": "system", "subtype": "init", "model": "m-20250101"},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed it."},
]


def _worker(settings: Settings) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DURABENCH_HOME": str(settings.home),
        "TEMPORAL_ADDRESS": str(settings.temporal_address),
        "DURABENCH_TASK_QUEUE": settings.task_queue,
        "DURABENCH_BASE_IMAGE": settings.base_image,
        "DURABENCH_LOG_LEVEL": "warning",
    }
    return subprocess.Popen([sys.executable, "worker.py"], cwd=REPO, env=env)


def _started_sessions(run_id: str) -> int:
    client = docker.from_env()
    try:
        found = client.containers.list(filters={"label": f"durabench.run={run_id}"})
        checks = [c.exec_run(["test", "-f", "/logs/agent/step-0.started"]) for c in found]
        return sum(1 for c in checks if c.exit_code == 0)
    finally:
        client.close()


async def test_kill_9_during_the_agent_loses_and_repeats_nothing(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    source = load_suite("pytorch")[1]
    shutil.copytree(source.task_dir, settings.home / "suites" / "one" / source.task_id)
    plan = tmp_path / "plan.json"
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SESSION))
    (tmp_path / "notes").write_text("notes\n")
    cases = [
        # Still running when the new worker re-attaches: it must wait for it.
        {
            "lane": "baseline",
            "transcript": "t.jsonl",
            "duration_sec": 40,
            "files": {"n.md": "notes"},
        },
        # Finished while no worker lived: it must be collected, not started again.
        {"transcript": "t.jsonl", "duration_sec": 4, "files": {"n.md": "notes"}},
    ]
    plan.write_text(json.dumps({"cases": cases}))
    request = RunRequest(
        run_id=f"resume-{uuid.uuid4().hex[:6]}",
        suite="one",
        agent="replay",
        model="m",
        agent_options={"plan": str(plan)},
    )
    first = _worker(settings)
    second = None
    try:
        await run_main(request, detach=True, client=client, settings=settings)
        handle = client.get_workflow_handle_for(
            SuiteRunWorkflow.run, run_workflow_id(request.run_id)
        )
        while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
            await asyncio.sleep(0.2)
        await approve_main(request.run_id, "ann", client=client)
        while _started_sessions(request.run_id) < 2:
            await asyncio.sleep(0.5)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        second = _worker(settings)
        outcome = await asyncio.wait_for(handle.result(), timeout=300)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)

    assert outcome.status == "completed"
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    result = RunResult.model_validate_json(paths.results.read_text())
    assert {(a.lane, a.attempt) for a in result.attempts} == {
        ("baseline", 1),
        ("sourcegraph_full", 1),
    }
    for a in result.attempts:
        assert a.exit_class == "completed" and a.agent_reattached, a
        transcript = (paths.attempt(a.task_id, a.lane, 1) / "agent" / "stdout.txt").read_text()
        assert transcript.count('"subtype": "init"') == 1  # the session ran exactly once
    assert _started_sessions(request.run_id) == 0
