"""Exact resume: kill -9 the worker mid-session; a new worker finishes without re-running it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import docker
import docker.errors
import pytest
from docker.models.containers import Container
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.service import RPCError

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from runtime.orphans import LOST
from tests.integration.runs import approved_detached, worker_process
from workflows import SuiteRunWorkflow, attempt_workflow_id

pytestmark = pytest.mark.docker

SESSION = [
    {"type": "system", "subtype": "init", "model": "m-20250101"},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed it."},
]


def _has(container: Container, path: str) -> bool:
    """Whether ``path`` exists in the container (one removed meanwhile has nothing)."""
    try:
        return container.exec_run(["test", "-e", path]).exit_code == 0
    except docker.errors.APIError:  # listed running, gone (or stopping) by the exec
        return False


def _started_sessions(run_id: str) -> int:
    client = docker.from_env()
    try:
        found = client.containers.list(filters={"label": f"durabench.run={run_id}"})
        return sum(1 for c in found if _has(c, "/logs/steps/step-0.started"))
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
        agent=AgentSpec(name="replay", model="m", options={"plan": str(plan)}),
    )
    first = worker_process(settings)
    second = None
    try:
        handle = await approved_detached(request, client, settings)
        while _started_sessions(request.run_id) < 2:
            await asyncio.sleep(0.5)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        second = worker_process(settings)
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
    for a in result.attempts:  # the new worker took the agent phase over: no timeout waited
        assert await _agent_retried_after(client, a.run_id, a.task_id, a.lane) == LOST, a


async def _agent_retried_after(client: Client, run_id: str, task_id: str, lane: str) -> str:
    """Why the agent phase's first attempt ended: the failure its retry started after."""
    handle = client.get_workflow_handle(attempt_workflow_id(run_id, task_id, lane, 1))
    scheduled = {}
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[event.event_id] = event.activity_task_scheduled_event_attributes
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = event.activity_task_started_event_attributes
            if scheduled[started.scheduled_event_id].activity_type.name == "run_agent":
                failure = started.last_failure
                return failure.application_failure_info.type or failure.message
    raise AssertionError(f"no agent phase started in {handle.id}")


def _container_has(run_id: str, task_id: str, path: str) -> bool:
    client = docker.from_env()
    try:
        found = client.containers.list(
            filters={"label": [f"durabench.run={run_id}", f"durabench.task={task_id}"]}
        )
        return any(_has(c, path) for c in found)
    finally:
        client.close()


async def test_kill_9_at_every_phase_runs_each_session_exactly_once(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    suite = settings.home / "suites" / "phases"
    source = load_suite("pytorch")[1]
    for name in ("a-agent", "b-verify", "c-between"):
        shutil.copytree(source.task_dir, suite / name)
        toml = (suite / name / "task.toml").read_text().replace(source.task_id, name)
        (suite / name / "task.toml").write_text(toml)
    slow = suite / "b-verify" / "tests" / "test.sh"
    slow.write_text(
        slow.read_text().replace("mkdir -p /logs/verifier", "sleep 15; mkdir -p /logs/verifier", 1)
    )
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SESSION))
    (tmp_path / "notes").write_text("notes\n")
    files = {"n.md": "notes"}
    cases = [
        {"task": "a-agent", "transcript": "t.jsonl", "duration_sec": 20, "files": files},
        {"transcript": "t.jsonl", "files": files},
    ]
    (tmp_path / "plan.json").write_text(json.dumps({"cases": cases}))
    markers = settings.home / "mounts" / "markers"  # agents mount only under the home's mounts/
    markers.mkdir(parents=True)
    request = RunRequest(
        run_id=f"phases-{uuid.uuid4().hex[:6]}",
        suite="phases",
        agent=AgentSpec(
            name="replay",
            model="m",
            options={"plan": str(tmp_path / "plan.json"), "marker_dir": str(markers)},
        ),
        parallel=1,
    )
    worker = worker_process(settings)
    try:
        handle = await approved_detached(request, client, settings)

        async def kill_when(ready: Callable[[], Awaitable[bool]]) -> None:
            nonlocal worker
            while not await ready():
                await asyncio.sleep(0.3)
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
            worker = worker_process(settings)

        async def agent_running() -> bool:
            return _started_sessions(request.run_id) >= 2

        async def verifier_running() -> bool:
            return _container_has(request.run_id, "b-verify", "/tests/test.sh")

        async def between_pairs() -> bool:
            try:
                progress = await handle.query(SuiteRunWorkflow.progress)
            except RPCError:
                return False
            return progress.done == 2

        await kill_when(agent_running)
        await kill_when(verifier_running)
        await kill_when(between_pairs)
        outcome = await asyncio.wait_for(handle.result(), timeout=420)
    finally:
        if worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=30)

    assert outcome.status == "completed"
    executions = sorted((markers / "executions.log").read_text().splitlines())
    expected = sorted(
        f"{t} {lane} 1"
        for t in ("a-agent", "b-verify", "c-between")
        for lane in ("baseline", "sourcegraph_full")
    )
    assert executions == expected  # every session ran exactly once
    result = RunResult.model_validate_json(
        RunPaths.for_run(settings.runs_dir, request.run_id).results.read_text()
    )
    assert len(result.attempts) == 6 and all(a.exit_class == "completed" for a in result.attempts)
    assert all(a.reward is not None for a in result.attempts)
    report = RunPaths.for_run(settings.runs_dir, request.run_id).report_md.read_text()
    assert all(t in report for t in ("a-agent", "b-verify", "c-between"))
    client_docker = docker.from_env()
    try:
        left = client_docker.containers.list(
            all=True, filters={"label": f"durabench.run={request.run_id}"}
        )
    finally:
        client_docker.close()
    assert left == []
