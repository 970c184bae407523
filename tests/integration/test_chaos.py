"""Chaos: the worker killed with SIGKILL at random moments, restarted each time.

A small suite whose agents take a few seconds (the replay agent, real Docker, the real dev
server) runs while its only worker is killed several times at seeded random moments: in
a container phase, between phases, between pairs, wherever the clock falls. At the end
every pair ended, every lane has exactly one attempt, each agent session ran exactly once
(counted on the host, where no container restart can hide a second run), every reward is
the one its workspace earns, and no container its worker host made is left.

The seed is printed; ``DURABENCH_CHAOS_SEED=N`` replays a failure's kill times.

The Docker daemon restarted while agents run: their containers stop (one is started
again, its step markers wiped). Emulated on the shared daemon's containers of the run
alone; ``DURABENCH_CHAOS_DAEMON=1`` restarts dockerd itself, on a machine nobody else
uses meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import docker
import docker.models.containers
import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from durabench.models.results import RunResult
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from runtime.client import deployment_of
from tests.integration.runs import approved_detached, gelu_task, replay_request, worker_process
from tests.workflows.harness import until
from workflows import SuiteRunWorkflow

pytestmark = pytest.mark.docker

TASKS = ("c1", "c2", "c3")
LANES = ("baseline", "sourcegraph_full")
UNFIXED = {("c2", "sourcegraph_full"), ("c3", "baseline")}
"""Sessions that change a file but not the bug: their reward is 0."""
KILLS = 3
SESSION_SEC = 10
"""How long each replayed session lasts: two waves of them outlast every kill's latest
time (6 + 4 + 4 s, and the restarts between), however fast the rest of an attempt is."""
FIRST_KILL_S = (2.0, 6.0)
"""When the first kill falls, from the approval: in planning, the image build or a wave."""
NEXT_KILL_S = (1.0, 4.0)
"""When each later kill falls, from the restart before it."""

SESSION = [
    {"type": "system", "subtype": "init", "model": "claude-haiku-4-5-20251001"},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Done."},
]


def _replay_plan(
    home: Path, plan_dir: Path, suite: str = "chaos", tasks: tuple[str, ...] = TASKS
) -> Path:
    """Cases for every session: the fix, or a note that fixes nothing; a few seconds each."""
    source = home / "suites" / suite / tasks[0] / "environment" / "tinytensor" / "activations.py"
    (plan_dir / "fixed.py").write_text(source.read_text().replace("0.44715", "0.044715"))
    (plan_dir / "notes.md").write_text("looked at it\n")
    (plan_dir / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SESSION))
    cases = [
        {
            "task": task,
            "lane": lane,
            "transcript": "t.jsonl",
            "duration_sec": SESSION_SEC,
            "files": {"notes.md": "notes.md"}
            if (task, lane) in UNFIXED
            else {"tinytensor/activations.py": "fixed.py"},
        }
        for task in tasks
        for lane in LANES
    ]
    plan = plan_dir / "plan.json"
    plan.write_text(json.dumps({"cases": cases}))
    return plan


def _kill(worker: subprocess.Popen[bytes]) -> None:
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()


def _sessions(markers: Path) -> int:
    log = markers / "executions.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _containers(*labels: str) -> list[str]:
    """The containers that carry every one of ``labels``, running or not."""
    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": list(labels)})
        return [str(c.name) for c in found]
    finally:
        client.close()


async def _left_by_this_host(client: Client, settings: Settings) -> list[str]:
    """Containers of this deployment that this test's worker host made, of any run.

    Not every container of the deployment: the session's other tests share its server,
    hence its deployment, and what they leave (or still tear down) is theirs to check.
    """
    deployment = await deployment_of(client)
    return _containers(f"durabench.deployment={deployment}", f"durabench.host={settings.host_id}")


async def test_random_kill_9s_lose_and_repeat_nothing(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    seed = int(os.environ.get("DURABENCH_CHAOS_SEED", random.randrange(1 << 32)))
    rng = random.Random(seed)
    log = tmp_path / "worker.log"
    print(f"chaos seed {seed} (DURABENCH_CHAOS_SEED={seed} replays it); worker log {log}")
    for task in TASKS:
        gelu_task(settings.home, "chaos", task)
    markers = settings.home / "mounts" / "markers"  # agents mount only under the home's mounts/
    markers.mkdir(parents=True)
    request = replay_request("chaos", "chaos", _replay_plan(settings.home, tmp_path), parallel=2)
    options = {**request.agent.options, "marker_dir": str(markers)}
    agent = request.agent.model_copy(update={"options": options})
    request = request.model_copy(update={"agent": agent})
    worker = worker_process(settings, log)
    kills: list[str] = []
    try:
        handle = await approved_detached(request, client, settings)
        began = time.monotonic()
        wait = rng.uniform(*FIRST_KILL_S)
        for _ in range(KILLS):
            await asyncio.sleep(wait)
            if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                break
            _kill(worker)
            kills.append(f"{time.monotonic() - began:.1f}s ({_sessions(markers)} sessions began)")
            worker = worker_process(settings, log)
            wait = rng.uniform(*NEXT_KILL_S)
        print("killed at", ", ".join(kills))
        outcome = await asyncio.wait_for(handle.result(), timeout=300)
        print(f"ended {time.monotonic() - began:.1f}s after the approval")
        progress = await handle.query(SuiteRunWorkflow.progress)
    finally:
        if worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=30)

    assert len(kills) == KILLS, f"the run ended before every kill: {kills}"
    assert outcome.status == "completed"
    executions = sorted((markers / "executions.log").read_text().splitlines())
    assert executions == sorted(f"{t} {lane} 1" for t in TASKS for lane in LANES)
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    result = RunResult.model_validate_json(paths.results.read_text())
    attempts = sorted((a.task_id, a.lane, a.attempt) for a in result.attempts)
    assert attempts == sorted((t, lane, 1) for t in TASKS for lane in LANES)
    for a in result.attempts:
        expected = 0.0 if (a.task_id, a.lane) in UNFIXED else 1.0
        assert a.reward == expected and not a.exit_class.startswith("infra"), a
    assert (progress.done, progress.excluded, progress.ended_abnormally) == (len(TASKS), 0, ())
    assert _containers(f"durabench.run={request.run_id}") == []
    assert await _left_by_this_host(client, settings) == []


DAEMON_ENV = "DURABENCH_CHAOS_DAEMON"
"""Set to 1 to restart the real Docker daemon (dockerd) instead of emulating it: only on
a machine whose daemon no one else uses meanwhile."""
DAEMON_TASKS = ("d1", "d2")
STRUCK = ("d1", "baseline"), ("d1", "sourcegraph_full")
"""Sessions still running when the daemon goes: each must end infra and run once more."""


def _daemon_plan(home: Path, plan_dir: Path) -> Path:
    """d2 ends in seconds; d1's first sessions run until the fault, its second ones end."""
    plan = json.loads(_replay_plan(home, plan_dir, "daemon", DAEMON_TASKS).read_text())
    hang = [{"task": t, "lane": lane, "attempt": 1, "hang": True} for t, lane in STRUCK]
    plan["cases"] = [*hang, *plan["cases"]]
    (plan_dir / "daemon.json").write_text(json.dumps(plan))
    return plan_dir / "daemon.json"


def _running_containers(run_id: str) -> list[docker.models.containers.Container]:
    client = docker.from_env()
    try:
        return list(client.containers.list(filters={"label": f"durabench.run={run_id}"}))
    finally:
        client.close()


def _emulate_daemon_restart(run_id: str) -> list[str]:
    """What a daemon restart does to this run, done to its containers alone.

    Every container stops (no restart policy brings ours back); one is started again,
    as a re-attach or an operator would, its tmpfs volumes (the step markers) wiped. The
    shared daemon itself keeps running: other tests use it meanwhile.
    """
    done = []
    for i, container in enumerate(_running_containers(run_id)):
        if i == 0:
            container.restart(timeout=0)
            done.append(f"restarted {container.name}")
        else:
            container.kill()
            done.append(f"stopped {container.name}")
    return done


def _gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie its parent has not reaped counts)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


def _restart_daemon(log: Path) -> list[str]:
    """Stop dockerd (SIGTERM: it stops every container) and start it as it was started."""
    found = subprocess.run(["pgrep", "-xo", "dockerd"], capture_output=True, text=True)
    pid = int(found.stdout.split()[0])
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    os.kill(pid, signal.SIGTERM)
    for _ in range(600):
        if _gone(pid):
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"dockerd {pid} did not stop within 2 minutes")
    with log.open("ab") as out:
        subprocess.Popen(argv, start_new_session=True, stdout=out, stderr=out)
    for _ in range(240):
        if not subprocess.run(["docker", "info"], capture_output=True).returncode:
            return [f"restarted dockerd ({b' '.join(argv).decode()}; its log {log})"]
        time.sleep(0.5)
    raise AssertionError(f"dockerd did not come back within 2 minutes; see {log}")


def _began(markers: Path) -> list[str]:
    """The sessions that began, as each signed in: "task lane attempt"."""
    log = markers / "executions.log"
    return log.read_text().splitlines() if log.exists() else []


def _attempts(settings: Settings, run_id: str) -> RunResult:
    paths = RunPaths.for_run(settings.runs_dir, run_id)
    return RunResult.model_validate_json(paths.results.read_text())


async def test_a_docker_daemon_restart_mid_session_loses_and_repeats_nothing(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """A finished session never runs again; one the restart killed ends infra, runs once more."""
    for task in DAEMON_TASKS:
        gelu_task(settings.home, "daemon", task)
    markers = settings.home / "mounts" / "markers"
    markers.mkdir(parents=True)
    request = replay_request("daemon", "daemon", _daemon_plan(settings.home, tmp_path), parallel=2)
    options = {**request.agent.options, "marker_dir": str(markers)}
    request = request.model_copy(
        update={"agent": request.agent.model_copy(update={"options": options})}
    )
    worker = worker_process(settings, tmp_path / "worker.log", DURABENCH_MAX_SANDBOXES="4")
    try:
        handle = await approved_detached(request, client, settings)

        async def struck_and_d2_done() -> bool:
            progress = await handle.query(SuiteRunWorkflow.progress)
            return {f"{t} {lane} 1" for t, lane in STRUCK} <= set(_began(markers)) and (
                progress.done == 1
            )

        await until(struck_and_d2_done, "d2 done while d1's sessions run", 1200)
        if os.environ.get(DAEMON_ENV) == "1":
            fault = await asyncio.to_thread(_restart_daemon, tmp_path / "dockerd.log")
        else:
            fault = _emulate_daemon_restart(request.run_id)
        print(*fault)
        outcome = await asyncio.wait_for(handle.result(), timeout=180)
    finally:
        _kill(worker)
    assert outcome.status == "completed"
    executions = sorted(_began(markers))
    again = [f"{t} {lane} 2" for t, lane in STRUCK]
    assert executions == sorted([f"{t} {lane} 1" for t in DAEMON_TASKS for lane in LANES] + again)
    result = _attempts(settings, request.run_id)
    for a in result.attempts:
        struck = (a.task_id, a.lane) in STRUCK and a.attempt == 1
        assert a.exit_class.startswith("infra") == struck, a
        if not struck:
            assert a.reward == 1.0, a
    assert len(result.attempts) == 6
    assert _containers(f"durabench.run={request.run_id}") == []
    assert await _left_by_this_host(client, settings) == []
