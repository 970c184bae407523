"""Two worker hosts on one machine: sticky sandboxes, per-host limits, a host that dies.

Two ``python worker.py`` processes share the task queue and the results directory but
have their own host ids (``host-a``, ``host-b``), so each polls its own host queue. Each
admits one attempt at a time. The test watches the containers (labelled with their host)
while a run goes, kills host A with SIGKILL while its agent runs, and then reads every
attempt's history: the worker that started each activity must be the owner of the queue
it was scheduled on.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import uuid
from collections import defaultdict
from pathlib import Path

import docker
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.sandbox.docker.cleanup import list_containers, listed_containers
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from runtime.client import deployment_of
from runtime.sweep import owned, remove_orphans
from tests.integration.runs import approved_detached, worker_process
from workflows import attempt_workflow_id

pytestmark = pytest.mark.docker

HOSTS = ("host-a", "host-b")
SESSION = [
    {"type": "system", "subtype": "init", "model": "m-20250101"},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Left a note."},
]


def _containers(run_id: str) -> dict[str, list[str]]:
    """Running containers of the run, by host label."""
    client = docker.from_env()
    try:
        found = listed_containers(client, f"durabench.run={run_id}")
        by_host: dict[str, list[str]] = defaultdict(list)
        for c in found:
            if c.get("State") == "running":
                host = (c.get("Labels") or {}).get("durabench.host", "")
                by_host[host].append(str(c["Names"][0]).lstrip("/"))
        return by_host
    finally:
        client.close()


async def _moved_attempt_verdicts(client: Client, run_id: str) -> dict[int, bool]:
    """Once an attempt has containers of two placements: whether a sweep keeps each."""
    docker_client = docker.from_env()
    try:
        mine = [c for c in list_containers(docker_client) if c.run_id == run_id]
    finally:
        docker_client.close()
    moved = {(c.task_id, c.lane) for c in mine if c.placement == 1}
    pair = [c for c in mine if (c.task_id, c.lane) in moved]
    if len(pair) < 2:
        return {}
    return {c.placement: await owned(client, c) for c in pair}


async def _ran_where(client: Client, workflow_id: str) -> list[tuple[str, str, str]]:
    """(activity, host queue's host, worker identity) of every host-queue activity started."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    scheduled = {}
    out = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = (attrs.activity_type.name, attrs.task_queue.name)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attrs = event.activity_task_started_event_attributes
            name, queue = scheduled[attrs.scheduled_event_id]
            if "/host/" in queue:
                out.append((name, queue.rsplit("/host/", 1)[1], attrs.identity))
    return out


async def test_sticky_hosts_hold_their_limits_and_a_dead_host_s_attempts_move(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    for task in load_suite("pytorch")[:2]:
        shutil.copytree(task.task_dir, settings.home / "suites" / "two" / task.task_id)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SESSION))
    (tmp_path / "notes").write_text("notes\n")
    case = {"transcript": "t.jsonl", "duration_sec": 6, "files": {"n.md": "notes"}}
    (tmp_path / "plan.json").write_text(json.dumps({"cases": [case]}))
    request = RunRequest(
        run_id=f"hosts-{uuid.uuid4().hex[:6]}",
        suite="two",
        agent=AgentSpec(name="replay", model="m", options={"plan": str(tmp_path / "plan.json")}),
        parallel=2,
    )
    workers = {
        host: worker_process(
            settings,
            tmp_path / f"{host}.log",
            DURABENCH_HOST_ID=host,
            DURABENCH_MAX_SANDBOXES="1",
            DURABENCH_HOST_TIMEOUT_SEC="5",
        )
        for host in HOSTS
    }
    seen: dict[str, int] = defaultdict(int)  # most containers a host had at once
    killed: set[str] = set()
    verdicts: dict[int, bool] = {}  # a moved attempt's containers: placement -> still owned
    try:
        handle = await approved_detached(request, client, settings)
        result_task = asyncio.ensure_future(handle.result())
        while not result_task.done():
            now = _containers(request.run_id)
            for host, names in now.items():
                seen[host] = max(seen[host], len(names))
            if not killed and "host-a" in now and seen["host-b"]:
                await asyncio.sleep(2)  # host A's agent is mid-session
                os.kill(workers["host-a"].pid, signal.SIGKILL)
                workers["host-a"].wait()
                killed.add("host-a")
            if killed and not verdicts:
                verdicts = await _moved_attempt_verdicts(client, request.run_id)
            await asyncio.wait([result_task], timeout=0.3)
        outcome = await asyncio.wait_for(result_task, timeout=300)
    finally:
        for proc in workers.values():
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)

    assert outcome.status == "completed"
    # Per-host limits held while both hosts were busy.
    assert killed == {"host-a"}
    assert dict(seen) == {"host-a": 1, "host-b": 1}

    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    result = RunResult.model_validate_json(paths.results.read_text())
    assert {a.exit_class for a in result.attempts} == {"completed"}
    assert len(result.attempts) == 4  # moving is not a new attempt
    moved = [a for a in result.attempts if a.hosts == ("host-a", "host-b")]
    assert moved, [a.hosts for a in result.attempts]  # host A's attempt started over on B
    assert {a.hosts for a in result.attempts} <= {
        ("host-a",),  # done before the kill
        ("host-b",),
        ("host-a", "host-b"),
    }

    # Every container phase ran on the worker owning the queue it was scheduled on.
    for a in result.attempts:
        wf = attempt_workflow_id(request.run_id, a.task_id, a.lane, a.attempt)
        ran = await _ran_where(client, wf)
        record = os.environ.get("DURABENCH_RECORD_HISTORIES")  # how tests/histories got it
        if record and a in moved:
            history = await client.get_workflow_handle(wf).fetch_history()
            Path(record, "agent_run_host_failover.json").write_text(history.to_json())
        assert {name for name, _, _ in ran} >= {"provision_sandbox", "run_agent", "finish_sandbox"}
        for name, host, identity in ran:
            assert identity.endswith(f"@{host}"), (name, host, identity)
        assert {host for _, host, _ in ran} == set(a.hosts)

    # While the moved attempt ran on B, a sweep would have removed only A's old container.
    assert verdicts == {0: False, 1: True}
    # Host A's container was left behind with its dead worker; a sweep removes it now.
    left = _containers(request.run_id)
    assert set(left) <= {"host-a"} and len(left.get("host-a", [])) == len(moved)
    docker_client = docker.from_env()
    try:
        # Only this deployment's: the workers labelled what they made with it.
        deployment = await deployment_of(client)
        swept = await remove_orphans(client, docker_client, deployment=deployment)
    finally:
        docker_client.close()
    assert {c.name for c, orphan in swept if orphan} >= set(left["host-a"])
    assert _containers(request.run_id) == {}
