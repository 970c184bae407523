"""kill -9 the embedded Temporal server mid-run, start it again: the run finishes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import uuid
from pathlib import Path

import docker
import pytest

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from runtime.client import connect
from runtime.embedded import ensure_server
from starter.run import main as run_main

pytestmark = pytest.mark.docker


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _agents_started(run_id: str) -> int:
    client = docker.from_env()
    try:
        found = client.containers.list(filters={"label": f"durabench.run={run_id}"})
        return sum(
            1
            for c in found
            if c.exec_run(["test", "-f", "/logs/steps/step-0.started"]).exit_code == 0
        )
    finally:
        client.close()


async def test_the_run_survives_a_killed_server(tmp_path: Path, settings: Settings) -> None:
    embedded = Settings(
        home=tmp_path / "home",
        port=_free_port(),
        ui_port=_free_port(),
        task_queue=settings.task_queue,
        base_image=settings.base_image,
    )
    source = load_suite("pytorch")[3]
    shutil.copytree(source.task_dir, embedded.home / "suites" / "one" / source.task_id)
    (tmp_path / "notes").write_text("notes\n")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"cases": [{"duration_sec": 12, "files": {"n.md": "notes"}}]}))
    request = RunRequest(
        run_id=f"srv-{uuid.uuid4().hex[:6]}",
        suite="one",
        agent=AgentSpec(name="replay", options={"plan": str(plan)}),
    )
    pid_file = embedded.home / "temporal.pid"
    try:
        client = await connect(embedded)
        run = asyncio.create_task(run_main(request, yes=True, client=client, settings=embedded))
        while _agents_started(request.run_id) < 2:
            await asyncio.sleep(0.5)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        await asyncio.sleep(2)
        await ensure_server(embedded)  # the next command brings it back, same SQLite file
        outcome = await asyncio.wait_for(run, timeout=240)
        assert outcome is not None and outcome.status == "completed"
        assert [s.attempts for s in outcome.lanes] == [1, 1]
    finally:
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            except ProcessLookupError:
                pass
