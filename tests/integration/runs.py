"""Runs for integration tests: to the end in-process, or detached for worker processes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import docker
from temporalio.client import Client, WorkflowHandle

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.models.suite_run import RunOutcome
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
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


def containers_of(run_id: str) -> list[str]:
    """Names of the containers (running or not) labelled with ``run_id``."""
    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": f"durabench.run={run_id}"})
        return [str(c.name) for c in found]
    finally:
        client.close()


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
    while (phase := (await handle.query(SuiteRunWorkflow.progress)).phase) != "awaiting_approval":
        if (await handle.describe()).close_time is not None:  # the plan refused it: say why
            await handle.result()
            raise RuntimeError(f"run {request.run_id} ended {phase} before its approval")
        await asyncio.sleep(0.2)
    await approve_main(request.run_id, "ann", client=client)
    return handle


def gelu_task(home: Path, suite: str, task_id: str) -> Path:
    """The pytorch gelu task, copied as ``suite/task_id`` under ``home``."""
    source = next(t for t in load_suite("pytorch") if t.task_id == "tensor-gelu-001")
    task = home / "suites" / suite / task_id
    shutil.copytree(source.task_dir, task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace(source.task_id, task_id))
    return task


def replay_request(
    prefix: str, suite: str, plan: Path, *, parallel: int, infra_retries: int = 1
) -> RunRequest:
    """A run of ``suite`` by the replay agent playing ``plan``, retrying infra quickly."""
    return RunRequest(
        run_id=f"{prefix}-{uuid.uuid4().hex[:6]}",
        suite=suite,
        agent=AgentSpec(name="replay", model="claude-haiku-4-5", options={"plan": str(plan)}),
        parallel=parallel,
        infra_retries=infra_retries,
        infra_backoff_sec=0.1,
    )


STAND_IN_VERSIONS = {
    "claude": "2.1.332 (Claude Code)",
    "codex": "codex-cli 0.169.0",
    "gemini": "0.61.0",
}
"""What each stand-in prints for ``--version``: each real CLI's own shape."""


def stand_in_task(
    home: Path,
    suite: str,
    task_id: str,
    clis: dict[str, str],
    transcripts: dict[str, list[dict[str, Any]]],
) -> Path:
    """The pytorch gelu task as ``suite/task_id`` under ``home``, whose image has stand-in
    agent CLIs on PATH (name to shell script) and recorded transcripts in /opt/stand-in/."""
    task = gelu_task(home, suite, task_id)
    env = task / "environment"
    for name, events in transcripts.items():
        (env / f"{name}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    for name, script in clis.items():
        shebang, _, rest = script.partition("\n")
        answer = f'[ "$1" = --version ] && {{ echo "{STAND_IN_VERSIONS[name]}"; exit 0; }}\n'
        (env / name).write_text(f"{shebang}\n{answer}{rest}")
    names = " ".join(clis)
    bins = " ".join(f"/usr/local/bin/{name}" for name in clis)
    dockerfile = env / "Dockerfile"
    dockerfile.write_text(
        dockerfile.read_text()
        + f"COPY {names} /usr/local/bin/\nCOPY *.jsonl /opt/stand-in/\nRUN chmod 755 {bins}\n"
    )
    return task


def baseline_request(prefix: str, suite: str, agent: str, model: str) -> RunRequest:
    """One lane of ``suite`` by ``agent``, no infra retry: an infra class fails the test."""
    return RunRequest(
        run_id=f"{prefix}-{uuid.uuid4().hex[:6]}",
        suite=suite,
        agent=AgentSpec(name=agent, model=model),
        config_mode="baseline_only",
        allow_unpaired=True,
        parallel=1,
        infra_retries=0,
    )
