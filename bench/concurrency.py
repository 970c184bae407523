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

Where the time over the ideal goes: CPU time is read before and after the timed run
(``_usage.py``) from the whole machine (``/proc/stat``, everything but idle and iowait) and
from what the run itself uses, each apart: the worker (``python worker.py``, its own
process, with the gateway it starts), the Temporal dev server, this script's process, the
sandboxes (the ``docker`` cgroup, which keeps the CPU of removed containers) and the Docker
daemon (``dockerd``, ``containerd``). The rest is other work (with the per-container shims,
whose CPU leaves with them). Per attempt, the
run's CPU is what one attempt costs the machine (targets: at most 0.7 CPU-s, the worker and
the server together at most 0.25). A wave cannot end before its agents have waited and its
attempts' CPU work has run on the machine's cores, and that work is not spread under the
agents' wait (a slot holds its sandbox from provision to teardown, so a wave's provisions
come before its agents and its verifies, collects and teardowns after), so the floor is

    waves x (wait + CPU-s per attempt x parallel / cores)

and the floor's ratio to the ideal is what this machine allows at best, whatever the
orchestration does. Where the measured ratio is near that floor, the wave's time is CPU;
where it is well above, it is latency (daemon round trips, queueing) on the way.

Also sampled every 2 s during each run: the worker's peak RSS (``VmHWM``), its open files
and threads, the daemon's, the container shims at once and the machine's least available
memory: the limits a large ``--parallel`` meets first (``--n 96 --parallel 48 --wait 30
--target 1.5`` is the scale of one host). A run that does not complete prints these and
the error, in place of a ratio.

The timed run is a round of the load guard (``_load.py``), judged with its own work
subtracted: 16 sandboxes starting, verifying and collecting at once on 2 cores take the
load past 4 by themselves, which says nothing of other work. The round waits for the
warm-up's load to fall, then is calm if the load stayed under twice the cores, or if it
began under it, no container but the run's ran meanwhile, and other work took at most a
tenth of the cores' time (the most it can have added to the wall time).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import (
    LoadGuard,
    add_tries,
    dev_server,
    machine,
    new_run_id,
    one_lane_run,
    run_script,
    worker_running,
    worker_settings,
)
from _load import OwnCpu
from _usage import Accounted, Cpu, ResourcePeaks, is_own_container
from temporalio.client import Client

from durabench.models import RunResult
from durabench.models.agent import AgentSpec
from durabench.sandbox.docker.capacity import host_admits
from durabench.settings.values import Settings
from durabench.tasks import load_suite

TARGET = 1.3
"""Wall / ideal at parallel 16 (at 48, the scale of one host, it is 1.5: ``--target 1.5``)."""
CPU_TARGET = 0.7
WORKER_SERVER_TARGET = 0.25
"""CPU-seconds per attempt: the run's, and the worker's and the server's together."""
RSS_LIMIT_MIB = 1024
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


@dataclass(frozen=True)
class Timed:
    """A timed run: seconds from request to result, CPU used meanwhile, what it held."""

    took: float
    cpu: Cpu
    result: RunResult | None
    """``None`` when the run did not complete (``error`` says how)."""
    error: str
    peaks: ResourcePeaks
    foreign: tuple[str, ...]

    def own(self) -> OwnCpu:
        """For the load guard: the CPU other work took during the run."""
        return OwnCpu(self.cpu.others, self.took, self.foreign)


async def timed_run(
    client: Client, settings: Settings, plan: Path, parallel: int, worker_pid: int
) -> Timed:
    """One run of the suite, timed and accounted; a run that fails is reported, not raised."""
    agent = AgentSpec(name="replay", model="m", options={"plan": str(plan)})
    run_id = new_run_id(SUITE)
    result, error = None, ""
    with Accounted(worker_pid, lambda labels: is_own_container(labels, {run_id})) as acc:
        try:
            _, result = await one_lane_run(client, settings, SUITE, agent, parallel, run_id)
        except RuntimeError as exc:  # the run ended, not completed: the limit met
            error = str(exc)
    return Timed(acc.seconds, acc.cpu, result, error, acc.peaks, acc.foreign)


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


def print_cpu(cpu: Cpu, took: float, n: int, parallel: int, cores: int) -> float:
    """The run's CPU split, whole and per attempt; returns the run's CPU-s per attempt."""
    per = cpu.run / n
    print(
        f"cpu over the run: machine {cpu.machine:.1f} CPU-s busy ({cpu.machine / took:.2f} of"
        f" {cores} cores); the run's {cpu.run:.1f} CPU-s, other work {cpu.others:.1f}"
    )
    parts = [
        ("worker (with the gateway)", cpu.worker),
        ("Temporal server", cpu.server),
        ("bench process", cpu.bench),
        ("sandboxes", cpu.sandboxes),
        ("docker daemon", cpu.daemon),
        ("container shims", cpu.shims),
    ]
    print("        per attempt: " + ", ".join(f"{name} {v / n:.3f}" for name, v in parts))
    ws = (cpu.worker + cpu.server) / n
    met = "met" if ws <= WORKER_SERVER_TARGET else "NOT MET"
    print(
        f"        {per:.2f} CPU-s per attempt (target <= {CPU_TARGET}: "
        f"{'met' if per <= CPU_TARGET else 'NOT MET'}); worker + server {ws:.3f}"
        f" (target <= {WORKER_SERVER_TARGET}: {met})"
    )
    return per


def print_timed(args: argparse.Namespace, timed: Timed, guard: LoadGuard, admits: int) -> None:
    """Everything the timed run says, then the guarded ratio line.

    ``admits``: the most sandboxes the worker runs at once; the floor's waves are as wide
    as the most agents that ran at once (memory admission decides below ``admits``).
    """
    cores = guard.cores
    waves = math.ceil(args.n / args.parallel)
    ideal = waves * args.wait
    print(f"wall time: {timed.took:.1f} s; ideal ceil({args.n}/{args.parallel}) x {args.wait:g} s")
    print(f"        = {ideal:.1f} s")
    print(f"resources: {timed.peaks.describe()}")
    rss_met = "met" if timed.peaks.worker_rss_mib < RSS_LIMIT_MIB else "NOT MET"
    print(f"        worker RSS target < {RSS_LIMIT_MIB} MiB: {rss_met}")
    foreign = ", ".join(timed.foreign) or "none"
    print(f"        containers not the run's seen running meanwhile: {foreign}")
    per = print_cpu(timed.cpu, timed.took, args.n, args.parallel, cores)
    if timed.result is None:
        print(f"not measured: the run did not complete ({timed.error}); see worker.log")
        return
    print(f"        most agents at once: {most_at_once(timed.result, 'run_agent')}")
    print(f"        phase medians (s): {phase_medians(timed.result)}")
    at_once = most_at_once(timed.result, "run_agent")
    width = max(1, min(args.parallel, admits, at_once))  # as wide as admission let it be
    waves = math.ceil(args.n / width)
    floor = waves * (args.wait + per * width / cores)
    over = (timed.took - waves * args.wait) / waves
    print(
        f"        a wave's CPU work {per * width:.1f} CPU-s ="
        f" {per * width / cores:.1f} s on {cores} cores, against {over:.1f} s"
        f" measured over each of {waves} waves' wait"
    )
    print(
        f"        floor on this machine: {waves} x ({args.wait:g} + {per:.2f} x"
        f" {width} / {cores}) = {floor:.1f} s = {floor / ideal:.2f}x the ideal"
    )
    ratio = timed.took / ideal
    target = f"<= {args.target}x"
    print(guard.ratio_line("concurrency wall / ideal", ratio, target, met=ratio <= args.target))


def parse() -> argparse.Namespace:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48, help="agents (one lane: tasks)")
    parser.add_argument("--parallel", type=int, default=16, help="agents in flight")
    parser.add_argument("--wait", type=float, default=20.0, help="seconds each agent waits")
    parser.add_argument(
        "--target", type=float, default=TARGET, help=f"wall / ideal at most (default {TARGET})"
    )
    parser.add_argument("--image", default=Settings.from_env().base_image)
    add_tries(parser)
    return parser.parse_args()


async def main() -> None:
    """Warm up, then measure N agents of ``--wait`` s at ``--parallel``; print the ratio."""
    args = parse()
    print(f"machine: {machine()}")
    print(f"agents: {args.n} (one lane), parallel: {args.parallel}, each waits {args.wait:g} s")
    root = Path(tempfile.mkdtemp(prefix="durabench-bench-conc-"))
    guard = LoadGuard(os.cpu_count() or 1, tries=args.tries)
    env = Settings.from_env()  # what the worker reads from the same env
    admits = env.max_sandboxes
    print(
        f"the worker admits by memory, measured (replay sandboxes count what they hold + "
        f"{env.sandbox_growth_mb} MiB), at most {admits} (DURABENCH_MAX_SANDBOXES); "
        f"{host_admits(env)} at {env.sandbox_memory_mb // 4} MiB a sandbox"
    )
    async with dev_server() as client:
        settings = worker_settings(client, root, args.image, "conc")
        write_suite(settings.home, args.n)
        with worker_running(settings, root / "worker.log") as worker:
            warm = await timed_run(client, settings, write_plan(root, 0), args.parallel, worker.pid)
            print(f"warm-up (images built, 0 s agents): {warm.took:.1f} s {warm.error}")
            if warm.result is None:
                print(f"resources: {warm.peaks.describe()}")
                sys.exit(f"the warm-up run did not complete; see {root / 'worker.log'}")
            plan = write_plan(root, args.wait)
            timed = await guard.round(
                "timed run",
                lambda: timed_run(client, settings, plan, args.parallel, worker.pid),
                own=Timed.own,
            )
    print_timed(args, timed, guard, admits)


if __name__ == "__main__":
    run_script(main)  # a SIGTERM (`timeout`) still stops the worker
