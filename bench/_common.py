"""Plumbing shared by the bench scripts: a throwaway dev server, instant activities, output.

Every bench starts its own in-memory ``temporal server start-dev`` on 127.0.0.1 with an
ephemeral port and stops it at the end, so it never touches a user's embedded server (its
port 7233 or its SQLite history) nor a test run's.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import _path  # noqa: F401  (first: the checkout's own packages)
from _load import LoadGuard, add_tries
from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.contrib.pydantic import pydantic_data_converter

from durabench.models.agent import AgentSpec
from durabench.models.attempt import AgentRunOutput, AttemptRef
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import Approval, RunRequest
from durabench.models.suite_run import RunOutcome, SuiteRunInput
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from runtime.embedded import dev_server_args, wait_for_port
from tests.integration.runs import approved_detached, worker_process
from tests.workflows.fakes import Recorder
from workflows import SuiteRunWorkflow, run_workflow_id

__all__ = [
    "LoadGuard",
    "add_tries",
    "approve",
    "bare_step",
    "dev_server",
    "instant_activities",
    "machine",
    "new_run_id",
    "one_lane_run",
    "run_script",
    "start_run",
    "worker_settings",
    "worker_running",
]


def machine() -> str:
    """CPU model, cores, memory and load average: the line every bench prints first.

    Each timed round then prints its own load before and after (:class:`LoadGuard`), and
    the closing ratio is printed only when every round was calm.
    """
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kib = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal")
    )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{model}, {os.cpu_count()} cores, {mem_kib / 2**20:.1f} GiB RAM, load {load}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def dev_server() -> AsyncIterator[Client]:
    """A fresh in-memory dev server (durabench's search attributes registered); a client."""
    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="durabench-bench-")) / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            dev_server_args(port=port, ui_port=None, db_file=None),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        await wait_for_port("127.0.0.1", port, timeout_s=60, log=log)
        yield await Client.connect(f"127.0.0.1:{port}", data_converter=pydantic_data_converter)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@activity.defn(name="bare_step")
async def bare_step(task: str) -> str:
    """The bare pipeline's trivial activity."""
    return task


def instant_activities(
    queue: str,
    task_ids: Sequence[str],
    *,
    agent: Callable[[AttemptRef], Any] | None = None,
    on_record: Callable[[AttemptResult], None] | None = None,
) -> list[Callable[..., Any]]:
    """``tests.workflows.fakes.Recorder``'s activities, with an instant agent.

    The recorder's ``run_agent`` sleeps 0.1 s (tests need agents to overlap); here it returns
    at once unless ``agent`` is given, and ``record_attempt`` keeps nothing (it would grow
    the worker's memory with the suite) but calls ``on_record``.
    """

    @activity.defn(name="run_agent")
    async def run_agent(ref: AttemptRef) -> AgentRunOutput:
        if agent is not None:
            await agent(ref)
        return AgentRunOutput(exit_code=0, timed_out=False, files_changed=1)

    @activity.defn(name="record_attempt")
    async def record_attempt(result: AttemptResult) -> None:
        if on_record is not None:
            on_record(result)

    ours: dict[str, Callable[..., Any]] = {
        "run_agent": run_agent,
        "record_attempt": record_attempt,
    }
    fakes = Recorder(queue=queue, task_ids=list(task_ids)).activities()
    return [ours.get(a.__name__, a) for a in fakes]


async def start_run(
    client: Client, queue: str, tasks: int, parallel: int, run_id: str
) -> WorkflowHandle[Any, RunOutcome]:
    """Start a real ``SuiteRunWorkflow`` and wait until its plan awaits approval."""
    request = RunRequest(run_id=run_id, suite="bench", parallel=parallel, infra_backoff_sec=0.1)
    handle = await client.start_workflow(
        SuiteRunWorkflow.run,
        SuiteRunInput(request=request),
        id=run_workflow_id(run_id),
        task_queue=queue,
    )
    while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
        await asyncio.sleep(0.1)
    return handle


async def approve(handle: WorkflowHandle[Any, RunOutcome]) -> float:
    """Approve the run; return the monotonic time just before (the start of its clock)."""
    began = time.monotonic()
    await handle.signal(SuiteRunWorkflow.approve, Approval(approver="bench"))
    return began


def run_script(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run a bench's ``main``; a SIGTERM (``timeout``) unwinds it, so its teardown runs."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    asyncio.run(main())


def worker_settings(client: Client, root: Path, image: str, name: str) -> Settings:
    """Settings of a real worker on ``client``'s server: home under ``root``, its own queue."""
    return Settings(
        home=root / "home",
        temporal_address=client.service_client.config.target_host,
        task_queue=f"bench-{name}-{uuid.uuid4().hex[:8]}",
        base_image=image,
        gateway_port=0,
    )


@contextmanager
def worker_running(settings: Settings, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``python worker.py`` in its own process for the block, stopped (and waited) after.

    The block gets the process: a bench reads its CPU, memory and files from ``/proc``.

    It runs one lane of new tasks unpaired (``ALLOW_UNPAIRED_SINGLE_CONFIG``): the benches'
    suites have no counterparts to pair with.
    """
    worker = worker_process(settings, log, ALLOW_UNPAIRED_SINGLE_CONFIG="true")
    try:
        yield worker
    finally:
        worker.terminate()
        worker.wait()


def new_run_id(suite: str) -> str:
    """A run id no other run on the machine has: ``<suite>-<6 hex digits>``."""
    return f"{suite}-{uuid.uuid4().hex[:6]}"


async def one_lane_run(
    client: Client,
    settings: Settings,
    suite: str,
    agent: AgentSpec,
    parallel: int,
    run_id: str | None = None,
) -> tuple[float, RunResult]:
    """One run of ``suite``, one lane, no retries: seconds from request to result; results.

    ``run_id`` (default ``<suite>-<random>``) lets a bench know its containers by their
    ``durabench.run`` label before the run starts.
    """
    request = RunRequest(
        run_id=run_id or new_run_id(suite),
        suite=suite,
        agent=agent,
        parallel=parallel,
        config_mode="baseline_only",
        infra_retries=0,
        allow_unpaired=True,  # one lane of new tasks: no counterparts, none needed
    )
    began = time.monotonic()
    handle = await approved_detached(request, client, settings)
    outcome = await handle.result()
    took = time.monotonic() - began
    if outcome.status != "completed":
        raise RuntimeError(f"run {request.run_id} ended {outcome.status}")
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    return took, RunResult.model_validate_json(paths.results.read_text())
