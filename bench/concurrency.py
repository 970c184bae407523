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

Where the time over the ideal goes: the whole machine's CPU busy time (``/proc/stat``,
everything but idle and iowait) is read over a few idle seconds before the warm-up (the
background: other users, the dev server) and over the timed run. Their difference, per
attempt, is what one attempt costs the machine in CPU (its sandbox's create, start,
execs, copies and removal in the Docker daemon; the worker's activities and workflows).
A wave cannot end before its agents have waited and its attempts' CPU work has run on
the machine's cores, and that work is not spread under the agents' wait (a slot holds
its sandbox from provision to teardown, so a wave's provisions come before its agents
and its verifies, collects and teardowns after), so the floor is

    waves x (wait + CPU-s per attempt x parallel / cores)

and the floor's ratio to the ideal is what this machine allows at best, whatever the
orchestration does. Where the measured ratio is near that floor, the wave's time is CPU;
where it is well above, it is latency (daemon round trips, queueing) on the way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import (
    dev_server,
    load_after,
    machine,
    one_lane_run,
    ratio_line,
    run_script,
    worker_running,
    worker_settings,
)
from temporalio.client import Client

from durabench.models import RunResult
from durabench.models.agent import AgentSpec
from durabench.settings.values import Settings
from durabench.tasks import load_suite

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


def cpu_busy_s() -> float:
    """Whole-machine CPU-seconds busy since boot (all cores): ``/proc/stat`` less idle, iowait."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    # user nice system idle iowait irq softirq steal (guest is counted in user already)
    busy = sum(fields[:8]) - fields[3] - fields[4]
    return busy / os.sysconf("SC_CLK_TCK")


async def background_cpu(seconds: float = 5.0) -> float:
    """Busy cores on average over ``seconds`` of doing nothing: the machine's background."""
    before, began = cpu_busy_s(), time.monotonic()
    await asyncio.sleep(seconds)
    return (cpu_busy_s() - before) / (time.monotonic() - began)


async def timed_run(
    client: Client, settings: Settings, plan: Path, parallel: int
) -> tuple[float, float, RunResult]:
    """Seconds from request to the run's result, CPU-seconds busy meanwhile, its results."""
    agent = AgentSpec(name="replay", model="m", options={"plan": str(plan)})
    before = cpu_busy_s()
    took, result = await one_lane_run(client, settings, SUITE, agent, parallel)
    return took, cpu_busy_s() - before, result


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
    cores = os.cpu_count() or 1
    async with dev_server() as client:
        settings = worker_settings(client, root, args.image, "conc")
        write_suite(settings.home, args.n)
        with worker_running(settings, root / "worker.log"):
            idle = await background_cpu()
            warm, _, _ = await timed_run(client, settings, write_plan(root, 0), args.parallel)
            print(f"warm-up (images built, 0 s agents): {warm:.1f} s")
            took, busy, result = await timed_run(
                client, settings, write_plan(root, args.wait), args.parallel
            )
    waves = math.ceil(args.n / args.parallel)
    ideal = waves * args.wait
    print(f"wall time: {took:.1f} s; ideal ceil({args.n}/{args.parallel}) x {args.wait:g} s")
    print(f"        = {ideal:.1f} s; most agents at once: {most_at_once(result, 'run_agent')}")
    print(f"        phase medians (s): {phase_medians(result)}")
    per_attempt = max(busy - idle * took, 0.0) / args.n
    floor = waves * (args.wait + per_attempt * args.parallel / cores)
    over = (took - ideal) / waves
    print(
        f"cpu: {busy:.1f} CPU-s busy over the run ({busy / took:.2f} of {cores} cores),"
        f" background {idle:.2f} cores before it"
    )
    print(
        f"        {per_attempt:.2f} CPU-s per attempt (background taken out);"
        f" a wave's CPU work {per_attempt * args.parallel:.1f} CPU-s"
        f" = {per_attempt * args.parallel / cores:.1f} s on {cores} cores"
        f" against {over:.1f} s measured over each wave's wait"
    )
    print(
        f"        floor on this machine: {waves} x ({args.wait:g} + {per_attempt:.2f} x"
        f" {args.parallel} / {cores}) = {floor:.1f} s = {floor / ideal:.2f}x the ideal"
    )
    print(load_after())
    ratio = took / ideal
    print(ratio_line("concurrency wall / ideal", ratio, f"<= {TARGET}x", met=ratio <= TARGET))


if __name__ == "__main__":
    run_script(main)  # a SIGTERM (`timeout`) still stops the worker
