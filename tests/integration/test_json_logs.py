"""Off a terminal a worker logs JSON lines only: its own, and temporalio's own warnings too."""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from durabench.settings.values import Settings
from tests.integration.runs import worker_process

pytestmark = pytest.mark.docker


async def _wait_for(log: Path, text: str, *, within_s: float) -> None:
    """Until ``text`` is in ``log`` (fails after ``within_s``: the worker never said it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while text not in log.read_text():
        if loop.time() > deadline:
            pytest.fail(f"the worker never logged {text!r}:\n{log.read_text()}")
        await asyncio.sleep(0.5)


async def test_a_workers_log_is_json_throughout(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    worker = worker_process(settings, log, DURABENCH_LOG_LEVEL="info", DURABENCH_GATEWAY_PORT="0")
    workflow_id = f"no-such-workflow-{uuid.uuid4().hex[:8]}"
    try:
        await _wait_for(log, "worker started", within_s=120)
        # A workflow type no worker registered: temporalio's worker logs an error with a
        # traceback (Python), and its core a warning (Rust), both naming the run.
        handle = await client.start_workflow(
            "NoSuchWorkflow", id=workflow_id, task_queue=settings.task_queue
        )
        run_id = str(handle.result_run_id)
        await _wait_for(log, run_id, within_s=120)
        await handle.terminate("the test saw the warning")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=120)
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            pytest.fail(f"not a JSON line: {line!r} in\n{log.read_text()}")
    theirs = [r for r in records if str(r.get("logger", "")).startswith("temporalio")]
    assert any(run_id in json.dumps(r) and "Traceback" in json.dumps(r) for r in theirs), records
    assert any(r["logger"].startswith("temporalio.core") and run_id in r["event"] for r in theirs)
    assert all(r.get("level") in ("warning", "error") for r in theirs), theirs
