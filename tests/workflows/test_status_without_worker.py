"""``python -m starter status <id>`` when no worker runs: what the server and the files know.

A worker plans (and runs) for real on disk with a faked sandbox, then stops; the CLI runs
in a subprocess on the same server and home, as a person would after closing the terminal
that carried the run.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from temporalio.client import Client

from durabench.models.run import RunPlan, RunRequest
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from starter.approve import approve_main
from starter.run import main as run_main
from tests.starter_cli import starter_async
from tests.workflows.fakes import Recorder
from tests.workflows.harness import RunHandle, disk_worker, until
from workflows import SuiteRunWorkflow, run_workflow_id


async def _planned(client: Client, settings: Settings, **request: Any) -> str:
    """Start a run of the bundled suite and wait until it awaits approval; its id."""
    req = RunRequest(run_id=f"r-{uuid.uuid4().hex[:6]}", suite="pytorch", **request)
    await run_main(req, detach=True, client=client, settings=settings)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(req.run_id))
    await until(lambda: handle.query(SuiteRunWorkflow.plan), "the plan")
    return req.run_id


def _said_to_start_a_worker(out: str, run_id: str) -> None:
    assert "No worker carries the run: " in out
    assert f"python -m starter resume {run_id}" in out


async def test_a_waiting_run_shows_its_plan_and_state(client: Client, settings: Settings) -> None:
    rec = Recorder(queue=settings.task_queue, task_ids=[], runs_dir=settings.runs_dir)
    async with disk_worker(client, settings, rec):
        run_id = await _planned(client, settings)
    proc = await starter_async(settings, "status", run_id, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "state: running, waiting for approval" in out
    assert f"Plan of run {run_id}" in out
    for row in ("model", "config mode", "parallel slots", "agent-hours"):
        assert row in out
    assert f"python -m starter approve {run_id}" in out
    _said_to_start_a_worker(out, run_id)


async def _one_pair_done(
    client: Client, settings: Settings, rec: Recorder
) -> tuple[RunHandle, list[str]]:
    """An approved run, one pair at a time, whose first pair ended and second never will."""
    run_id = await _planned(client, settings, parallel=1)
    paths = RunPaths.for_run(settings.runs_dir, run_id)
    tasks = [t.task_id for t in RunPlan.model_validate_json(paths.plan.read_text()).tasks]
    rec.gates[f"run_agent/{tasks[1]}/baseline"] = asyncio.Event()  # never set: it stays
    await approve_main(run_id, "ann", client=client)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    await until(lambda: _done(handle), "the first pair's end reached the run", tries=1200)
    return handle, tasks


async def test_a_running_run_shows_the_pairs_that_finished(
    client: Client, settings: Settings
) -> None:
    rec = Recorder(queue=settings.task_queue, task_ids=[], runs_dir=settings.runs_dir)
    async with disk_worker(client, settings, rec):
        handle, tasks = await _one_pair_done(client, settings, rec)
    run_id = handle.id.removeprefix("run/")
    proc = await starter_async(settings, "status", run_id, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "state: running" in out
    assert "waiting for approval" not in out
    assert f"1/{len(tasks)} pairs done" in out
    assert f"finished: {tasks[0]}" in out
    assert "approved by ann" in out
    assert f"Plan of run {run_id}" in out
    _said_to_start_a_worker(out, run_id)


async def _done(handle: RunHandle) -> bool:
    return (await handle.query(SuiteRunWorkflow.progress)).done >= 1


async def test_a_finished_run_shows_its_result_without_a_worker(
    client: Client, settings: Settings
) -> None:
    rec = Recorder(queue=settings.task_queue, task_ids=[], runs_dir=settings.runs_dir)
    async with disk_worker(client, settings, rec):
        run_id = await _planned(client, settings)
        await approve_main(run_id, "ann", client=client)
        handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
        await handle.result()
    proc = await starter_async(settings, "status", run_id, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "state: completed" in out
    assert f"Results: {RunPaths.for_run(settings.runs_dir, run_id).root}" in out
    assert "No worker carries the run" not in out


async def test_a_cancelled_run_shows_the_pairs_that_finished_before(
    client: Client, settings: Settings
) -> None:
    rec = Recorder(queue=settings.task_queue, task_ids=[], runs_dir=settings.runs_dir)
    async with disk_worker(client, settings, rec):
        handle, tasks = await _one_pair_done(client, settings, rec)
        await handle.cancel()
        await until(lambda: _closed(handle), "the run ended, cancelled", tries=1200)
    proc = await starter_async(settings, "status", handle.id.removeprefix("run/"), timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "state: canceled" in out
    assert f"before it ended: 1/{len(tasks)} pairs done" in out
    assert f"finished: {tasks[0]}" in out
    assert "No worker carries the run" not in out


async def _closed(handle: RunHandle) -> bool:
    return (await handle.describe()).close_time is not None
