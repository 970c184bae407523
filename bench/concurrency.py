"""Whether ``--parallel 16`` runs 16 agents at once: N agents that each wait 20 s, real Docker.

``python bench/concurrency.py [--n 48] [--parallel 16] [--wait 20]``

One lane (``baseline_only``): ``--parallel`` counts agents, and so does ``--n``. Each task
is a copy of the bundled ``tensor-gelu-001`` whose verifier only writes reward 1 (the
measure is agents, not the CPU-bound verifier, which a 2-core host runs one at a time).
The agent is the replay agent, a session of ``--wait`` seconds. Everything else is real:
the workflows, ``python worker.py`` in its own process, the sandbox activities, Docker.

A warm-up run of every task with a 0 s agent builds the task images first (they are
content-addressed, one per task id), so the measured run starts from built images, as a
second run of a suite does. Measured: approval -> run result. The ideal is
``ceil(N / parallel) x wait``; the target is at most 1.3x of it. Also printed: the most
agents that ran at once, and each phase's median, from ``results.json``'s timings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import dev_server, machine, ratio_line
from temporalio.client import Client

from durabench.models import RunRequest, RunResult
from durabench.models.agent import AgentSpec
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.runs import approved_detached, worker_process

TARGET = 1.3
SUITE = "conc"
VERIFIER = """#!/bin/bash
mkdir -p /logs/verifier
echo 1.0 > /logs/verifier/reward.txt
"""


def write_suite(home: Path, n: int) -> None:
    """``n`` copies of ``tensor-gelu-001`` (``c001`` ...) with an instant verifier."""
    source = next(t for t in load_suite("pytorch") if t.task_id == "tensor-gelu-001")
    for i in range(1, n + 1):
        task = home / "suites" / SUITE / f"c{i:03d}"
        shutil.copytree(source.task_dir, task)
        toml = (task / "task.toml").read_text().replace(source.task_id, task.name)
        (task / "task.toml").write_text(toml)
        (task / "tests" / "test.sh").write_text(VERIFIER)


def write_plan(root: Path, wait: float) -> Path:
    """A replay plan whose every session lasts ``wait`` seconds and leaves a note."""
    (root / "notes").write_text("notes\n")
    plan = root / f"plan-{wait:g}.json"
    case = {"duration_sec": wait, "files": {"n.md": "notes"}}
    plan.write_text(json.dumps({"cases": [case]}))
    return plan


async def timed_run(
    client: Client, settings: Settings, plan: Path, parallel: int
) -> tuple[float, RunResult]:
    """Seconds from approval to the run's result, and its results."""
    request = RunRequest(
        run_id=f"conc-{uuid.uuid4().hex[:6]}",
        suite=SUITE,
        agent=AgentSpec(name="replay", model="m", options={"plan": str(plan)}),
        parallel=parallel,
        config_mode="baseline_only",
        infra_retries=0,
        allow_unpaired=True,  # new tasks in one lane have no counterparts; none needed here
    )
    began = time.monotonic()
    handle = await approved_detached(request, client, settings)
    outcome = await handle.result()
    took = time.monotonic() - began
    if outcome.status != "completed":
        raise RuntimeError(f"run {request.run_id} ended {outcome.status}")
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    return took, RunResult.model_validate_json(paths.results.read_text())


def most_at_once(result: RunResult, phase: str) -> int:
    """The most attempts whose ``phase`` overlapped, from their recorded timings."""
    edges: list[tuple[float, int]] = []
    for attempt in result.attempts:
        for t in attempt.timings:
            if t.phase == phase:
                edges += [(t.started_at.timestamp(), 1), (t.finished_at.timestamp(), -1)]
    running = peak = 0
    for _, step in sorted(edges):
        running += step
        peak = max(peak, running)
    return peak


def phase_medians(result: RunResult) -> str:
    """Median seconds of each phase over the run's attempts, in pipeline order."""
    by_phase: dict[str, list[float]] = {}
    for attempt in result.attempts:
        for t in attempt.timings:
            seconds = (t.finished_at - t.started_at).total_seconds()
            by_phase.setdefault(t.phase, []).append(seconds)
    return ", ".join(f"{p} {statistics.median(s):.2f}" for p, s in by_phase.items())


def cpu_busy_seconds() -> float:
    """Whole-machine CPU time spent busy since boot (``/proc/stat``: all but idle and iowait).

    Sampled around the timed run, it counts every process the run keeps busy: the worker,
    the server, dockerd, containerd and its shims, and the sandboxes' own processes.
    """
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle, iowait = fields[3], fields[4]
    return (sum(fields[:8]) - idle - iowait) / os.sysconf("SC_CLK_TCK")


async def main() -> None:
    """Warm up, then measure N agents of ``--wait`` s at ``--parallel``; print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48, help="agents (one lane: tasks)")
    parser.add_argument("--parallel", type=int, default=16, help="agents in flight")
    parser.add_argument("--wait", type=float, default=20.0, help="seconds each agent waits")
    parser.add_argument("--image", default=Settings.from_env().base_image)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"agents: {args.n} (one lane), parallel: {args.parallel}, each waits {args.wait:g} s")
    root = Path(tempfile.mkdtemp(prefix="durabench-bench-conc-"))
    async with dev_server() as client:
        settings = Settings(
            home=root / "home",
            temporal_address=client.service_client.config.target_host,
            task_queue=f"bench-conc-{uuid.uuid4().hex[:8]}",
            base_image=args.image,
            gateway_port=0,
        )
        write_suite(settings.home, args.n)
        # One lane of new tasks has no counterparts to pair with: run it unpaired, as asked.
        worker = worker_process(settings, root / "worker.log", ALLOW_UNPAIRED_SINGLE_CONFIG="true")
        try:
            warm, _ = await timed_run(client, settings, write_plan(root, 0), args.parallel)
            print(f"warm-up (images built, 0 s agents): {warm:.1f} s")
            busy_before = cpu_busy_seconds()
            took, result = await timed_run(
                client, settings, write_plan(root, args.wait), args.parallel
            )
            busy = cpu_busy_seconds() - busy_before
        finally:
            worker.terminate()
            worker.wait()
    ideal = math.ceil(args.n / args.parallel) * args.wait
    print(f"wall time: {took:.1f} s; ideal ceil({args.n}/{args.parallel}) x {args.wait:g} s")
    print(f"        = {ideal:.1f} s; most agents at once: {most_at_once(result, 'run_agent')}")
    print(f"        phase medians (s): {phase_medians(result)}")
    cores = os.cpu_count() or 1
    print(
        f"        CPU busy: {busy:.0f} CPU-s over the run, {busy / args.n:.2f} per attempt; "
        f"{busy / (took * cores):.0%} of {cores} cores' {took * cores:.0f} CPU-s"
    )
    # Were every attempt's CPU work spread evenly, the run could not end before busy/cores:
    # the wall time this machine allows whatever durabench schedules, and the cores that
    # the target's wall time would need with the same work.
    floor = max(ideal, busy / cores)
    print(
        f"        CPU floor on {cores} cores: {floor:.1f} s ({floor / ideal:.2f}x ideal); "
        f"{TARGET}x the ideal needs {busy / (TARGET * ideal):.1f} cores at this CPU per attempt"
    )
    print(f"load after: {machine().rsplit('load ', 1)[1]}")
    ratio = took / ideal
    print(ratio_line("concurrency wall / ideal", ratio, f"<= {TARGET}x", met=ratio <= TARGET))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout` still stops the worker
    asyncio.run(main())
