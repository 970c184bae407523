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

Where the time over the ideal goes: CPU time is read before and after the timed run from
the whole machine (``/proc/stat``, everything but idle and iowait) and from what the run
itself uses: the sandboxes (the ``docker`` cgroup's ``cpuacct.usage``, which keeps the CPU
of removed containers), the Docker daemon (``dockerd`` and ``containerd``) and this
script's own processes (itself, the dev server and the worker). On a shared machine the
second is the run's cost (other users' containers and daemon calls, if any, count in it
too: an upper bound); the first says how busy the cores were. Per attempt, the run's CPU
is what one attempt costs the machine. A wave cannot end before its agents have waited
and its attempts' CPU work has run on the machine's cores, and that work is not spread
under the agents' wait (a slot holds its sandbox from provision to teardown, so a wave's
provisions come before its agents and its verifies, collects and teardowns after), so the
floor is

    waves x (wait + CPU-s per attempt x parallel / cores)

and the floor's ratio to the ideal is what this machine allows at best, whatever the
orchestration does. Where the measured ratio is near that floor, the wave's time is CPU;
where it is well above, it is latency (daemon round trips, queueing) on the way.

The timed run is a round of the load guard (``_load.py``): repeated while the 1-minute
load is over twice the cores, and no ratio unless it was calm. The run's own work counts
in that load: 16 sandboxes starting, verifying and collecting at once on 2 cores can take
it past 4 by themselves, and then this machine cannot give the figure (use more cores, or
a lower ``--parallel``, and say so with the figure).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import (
    LoadGuard,
    add_tries,
    dev_server,
    machine,
    one_lane_run,
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


DOCKER_CGROUP = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")
"""Every container's CPU nanoseconds, kept after removal (cgroup v1, cgroupfs driver)."""


@dataclass(frozen=True)
class Cpu:
    """CPU-seconds used so far, by where (see the module's docstring)."""

    machine: float
    sandboxes: float
    daemon: float
    bench: float

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(
            self.machine - other.machine,
            self.sandboxes - other.sandboxes,
            self.daemon - other.daemon,
            self.bench - other.bench,
        )

    @property
    def run(self) -> float:
        """What the run used: its sandboxes, the daemon, the bench's own processes."""
        return self.sandboxes + self.daemon + self.bench


def _proc_cpu(pid: int, children: bool) -> float:
    """CPU-seconds of process ``pid`` (with its waited-for children's, if asked)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # gone meanwhile
        return 0.0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_now() -> Cpu:
    """CPU-seconds so far: the machine's busy time, the sandboxes', the daemon's, the bench's."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    # user nice system idle iowait irq softirq steal (guest is counted in user already)
    machine_s = (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    sandboxes = int(DOCKER_CGROUP.read_text()) / 1e9 if DOCKER_CGROUP.exists() else 0.0
    daemon = bench = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        ppid = int(text.rsplit(")", 1)[1].split()[1])
        if comm in ("dockerd", "containerd"):
            daemon += _proc_cpu(int(stat.parent.name), children=False)
        elif ppid == os.getpid():  # the dev server and the worker
            bench += _proc_cpu(int(stat.parent.name), children=True)
    own = os.times()
    return Cpu(machine_s, sandboxes, daemon, bench + own.user + own.system)


async def timed_run(
    client: Client, settings: Settings, plan: Path, parallel: int
) -> tuple[float, Cpu, RunResult]:
    """Seconds from request to the run's result, CPU used meanwhile, its results."""
    agent = AgentSpec(name="replay", model="m", options={"plan": str(plan)})
    before = cpu_now()
    took, result = await one_lane_run(client, settings, SUITE, agent, parallel)
    return took, cpu_now() - before, result


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
    add_tries(parser)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"agents: {args.n} (one lane), parallel: {args.parallel}, each waits {args.wait:g} s")
    root = Path(tempfile.mkdtemp(prefix="durabench-bench-conc-"))
    cores = os.cpu_count() or 1
    guard = LoadGuard(cores, tries=args.tries)
    async with dev_server() as client:
        settings = worker_settings(client, root, args.image, "conc")
        write_suite(settings.home, args.n)
        with worker_running(settings, root / "worker.log"):
            warm, _, _ = await timed_run(client, settings, write_plan(root, 0), args.parallel)
            print(f"warm-up (images built, 0 s agents): {warm:.1f} s")
            took, cpu, result = await guard.round(
                "timed run",
                lambda: timed_run(client, settings, write_plan(root, args.wait), args.parallel),
            )
    waves = math.ceil(args.n / args.parallel)
    ideal = waves * args.wait
    print(f"wall time: {took:.1f} s; ideal ceil({args.n}/{args.parallel}) x {args.wait:g} s")
    print(f"        = {ideal:.1f} s; most agents at once: {most_at_once(result, 'run_agent')}")
    print(f"        phase medians (s): {phase_medians(result)}")
    per_attempt = cpu.run / args.n
    floor = waves * (args.wait + per_attempt * args.parallel / cores)
    over = (took - ideal) / waves
    print(
        f"cpu over the run: machine {cpu.machine:.1f} CPU-s busy ({cpu.machine / took:.2f} of"
        f" {cores} cores); the run's {cpu.run:.1f} CPU-s: sandboxes {cpu.sandboxes:.1f},"
        f" docker daemon {cpu.daemon:.1f}, worker + server + bench {cpu.bench:.1f}"
    )
    print(
        f"        {per_attempt:.2f} CPU-s per attempt; a wave's CPU work"
        f" {per_attempt * args.parallel:.1f} CPU-s = {per_attempt * args.parallel / cores:.1f} s"
        f" on {cores} cores, against {over:.1f} s measured over each wave's wait"
    )
    print(
        f"        floor on this machine: {waves} x ({args.wait:g} + {per_attempt:.2f} x"
        f" {args.parallel} / {cores}) = {floor:.1f} s = {floor / ideal:.2f}x the ideal"
    )
    ratio = took / ideal
    print(guard.ratio_line("concurrency wall / ideal", ratio, f"<= {TARGET}x", met=ratio <= TARGET))


if __name__ == "__main__":
    run_script(main)  # a SIGTERM (`timeout`) still stops the worker
