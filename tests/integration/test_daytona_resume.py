"""Exact resume on Daytona: kill -9 the worker mid-session; a new one re-attaches."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import uuid
from pathlib import Path

import docker
import docker.errors
import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.runs import approved_detached, worker_process

pytestmark = pytest.mark.docker
pytest.importorskip("daytona")

SESSION = [
    {"type": "system", "subtype": "init", "model": "m-20250101"},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed it."},
]


def _started_sessions(containers: list[str]) -> int:
    """Stand-in sandboxes whose agent step started."""
    client = docker.from_env()
    try:
        n = 0
        for name in containers:
            try:
                done = client.containers.get(name).exec_run(
                    ["test", "-e", "/logs/steps/step-0.started"]
                )
            except docker.errors.APIError:  # removed meanwhile
                continue
            n += done.exit_code == 0
        return n
    finally:
        client.close()


async def test_kill_9_mid_session_reattaches_on_daytona(
    client: Client, settings: Settings, standin: object, tmp_path: Path
) -> None:
    """The new worker finds the Daytona sandbox by name and waits for the running session."""
    source = load_suite("pytorch")[1]
    shutil.copytree(source.task_dir, settings.home / "suites" / "one" / source.task_id)
    plan = tmp_path / "plan.json"
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SESSION))
    (tmp_path / "notes").write_text("notes\n")
    case = {"transcript": "t.jsonl", "duration_sec": 20, "files": {"n.md": "notes"}}
    plan.write_text(json.dumps({"cases": [case]}))
    request = RunRequest(
        run_id=f"dtresume-{uuid.uuid4().hex[:6]}",
        suite="one",
        agent=AgentSpec(name="replay", model="m", options={"plan": str(plan)}),
    )
    env = {
        "DURABENCH_SANDBOX": "daytona",
        "DAYTONA_API_URL": standin.url,  # type: ignore[attr-defined]
        "DURABENCH_DAYTONA_BACKOFF_SEC": "0.05",
    }
    creates = standin.creates  # type: ignore[attr-defined]
    first = worker_process(settings, **env)
    second = None
    try:
        handle = await approved_detached(request, client, settings)
        while _started_sessions(standin.containers()) < 2:  # type: ignore[attr-defined]
            await asyncio.sleep(0.5)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        second = worker_process(settings, **env)
        outcome = await asyncio.wait_for(handle.result(), timeout=300)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)

    assert outcome.status == "completed"
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    result = RunResult.model_validate_json(paths.results.read_text())
    assert len(result.attempts) == 2
    for a in result.attempts:
        assert a.exit_class == "completed" and a.agent_reattached, a
        transcript = (paths.attempt(a.task_id, a.lane, 1) / "agent" / "stdout.txt").read_text()
        assert transcript.count('"subtype": "init"') == 1  # the session ran exactly once
    assert standin.creates - creates == 2  # type: ignore[attr-defined]
    assert standin.containers() == []  # type: ignore[attr-defined]
