"""Suite wall time against Harbor: the same task directories through both, oracle agent.

``python bench/peer_harbor.py [--rounds 2] [--parallel 4] [--harbor PATH] [--image IMAGE]``

The four tasks of the bundled ``pytorch`` suite are copied once into a temp directory, which
is both durabench's suite ``peer`` and Harbor's dataset (``harbor run -p``): the same
directories through both. Two changes make them Harbor's too: ``[task] name = "org/name"``
where a task lacks it (Harbor requires one), and the Dockerfile's ``BASE_IMAGE`` default set
to ``--image``, so that Harbor (which passes no build argument) builds from the same local
base image as durabench, with no pull.

Harbor side: ``harbor run -a oracle -e docker -p TASKS -n PARALLEL``, its defaults otherwise
(each trial builds its image and removes it at the end with ``down --rmi local``: Harbor's
own way, kept), timed as the command a user waits for; its own job clock is printed too. It
runs with ``HARBOR_TELEMETRY=0`` inside ``unshare -n`` (a network namespace with only
loopback), since it posts telemetry otherwise; the Docker socket is a file, reachable from
there. Harbor calls ``docker compose`` (v2). Where ``docker compose version`` answers, Harbor
uses it as it is; where it does not (Debian ships no v2), the script writes a CLI plugin
shim in a private ``DOCKER_CONFIG`` over Debian's ``docker-compose`` v1 (``up --wait``
without ``--wait``, ``exec`` with ``-T``, ``cp`` through ``docker cp``). The output says
which, with that Compose's start-up time (``version``, median of 3).

durabench side: one lane (``baseline_only``, ``allow_unpaired``), oracle agent,
``--parallel``, real workflows, ``python worker.py`` in its own process, real Docker; timed
from the request to the run's result (planning and approval included).

One untimed run of each comes first (durabench keeps the images it builds; Harbor builds in
every trial anyway); then ``--rounds`` rounds alternate which goes first. Both must score
1.0 in every run. Harbor 0.25+ needs Python >= 3.12: found with
``--harbor PATH``, ``$DURABENCH_HARBOR`` or ``harbor`` on PATH; where it is missing (or Python
3.12, or ``unshare``, or any Compose) the script says so and exits 0 without a ratio.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NoReturn

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

from durabench.models.agent import AgentSpec
from durabench.settings.values import Settings
from durabench.tasks import load_suite

TARGET = 0.2
SUITE = "peer"
ORG = "durabench"

SHIM = '''#!{python}
"""docker compose (v2 CLI plugin) over docker-compose v1, for Harbor: bench/peer_harbor.py."""
import json, os, subprocess, sys, time

BEGAN = time.monotonic()
V1 = {v1!r}
CALLS = {calls!r}
VALUED = {{"-p", "--project-name", "--project-directory", "-f", "--file", "--env-file",
          "--profile", "--ansi", "--log-level"}}
EXEC_VALUED = {{"-w", "--workdir", "-e", "--env", "-u", "--user", "--index"}}
args = sys.argv[1:]
if args[:1] == ["docker-cli-plugin-metadata"]:
    print(json.dumps({{"SchemaVersion": "0.1.0", "Vendor": "durabench bench",
                      "Version": "2.0.0", "ShortDescription": "docker-compose v1 as v2"}}))
    sys.exit(0)
if args[:1] == ["compose"]:
    args = args[1:]
top = []
while args and args[0].startswith("-"):
    top.append(args.pop(0))
    if top[-1] in VALUED and args:
        top.append(args.pop(0))
cmd, rest = (args[0], args[1:]) if args else ("", [])
if cmd == "version":
    print("Docker Compose version v2.0.0 (shim over docker-compose v1)")
    sys.exit(0)
if cmd == "up":
    rest = [a for a in rest if a != "--wait"]
elif cmd == "exec":
    opts = []
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag in ("-T", "--no-TTY"):
            continue
        opts.append(flag)
        if flag in EXEC_VALUED and rest:
            opts.append(rest.pop(0))
    rest = ["-T", *opts, *rest]
elif cmd == "cp":
    def container(ref):
        service, sep, path = ref.partition(":")
        if not sep or "/" in service:
            return ref
        found = subprocess.run([V1, *top, "ps", "-q", service], capture_output=True, text=True)
        cid = found.stdout.strip().splitlines()
        return f"{{cid[0]}}:{{path}}" if cid else ref
argv = [V1, *top, *([cmd] if cmd else []), *rest]
if cmd == "cp":
    argv = ["docker", "cp", *[container(a) for a in rest]]
code = subprocess.run(argv).returncode
with open(CALLS, "a") as log:
    log.write(json.dumps({{"cmd": cmd, "s": time.monotonic() - BEGAN}}) + "\\n")
sys.exit(code)
'''
"""The ``docker-compose`` CLI plugin: ``{python}``, ``{v1}`` and ``{calls}`` filled in when
written. It appends each call's command and seconds to ``calls`` (JSON lines): what the
v1 stand-in costs Harbor, which Compose v2 (one Go binary) would cost differently."""


def say_and_exit(why: str) -> NoReturn:
    """A missing prerequisite: say what and how to get it, end without a ratio (exit 0)."""
    print(f"{why}\nno ratio: Harbor was not run")
    sys.exit(0)


def find_harbor(given: str | None) -> Path:
    """Harbor's executable (``--harbor``, ``$DURABENCH_HARBOR``, PATH), on Python >= 3.12."""
    where = given or os.environ.get("DURABENCH_HARBOR") or shutil.which("harbor")
    pythons = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python")))
    py312 = next(iter(pythons), None) or shutil.which("python3.12") or shutil.which("python3.13")
    if where is None or not Path(where).is_file():
        if py312 is None:
            say_and_exit(
                "Python >= 3.12 is missing, and Harbor 0.25+ needs it: install one (e.g. "
                "`pyenv install 3.12`), then `python3.12 -m venv VENV && VENV/bin/pip install "
                "harbor` and pass --harbor VENV/bin/harbor"
            )
        say_and_exit(
            f"Harbor not found ({where or 'no --harbor, no $DURABENCH_HARBOR, none on PATH'}): "
            f"`{py312} -m venv VENV && VENV/bin/pip install harbor`, then pass "
            "--harbor VENV/bin/harbor or set DURABENCH_HARBOR"
        )
    harbor = Path(where).resolve()
    first = harbor.read_bytes()[:200].split(b"\n", 1)[0].decode(errors="replace")
    if not first.startswith("#!"):
        return harbor  # not a script: its interpreter cannot be asked, Harbor will say
    shebang = first.removeprefix("#!").split()
    found = subprocess.run(
        [*shebang, "-c", "import sys; print(sys.version_info >= (3, 12))"],
        capture_output=True,
        text=True,
    )
    if found.stdout.strip() != "True":
        say_and_exit(
            f"{harbor} does not run on Python >= 3.12 ({' '.join(shebang)}), which Harbor "
            "0.25+ needs: install it into a Python 3.12 venv and pass --harbor"
        )
    return harbor


@dataclass(frozen=True)
class Compose:
    """The ``docker compose`` Harbor calls: the real v2, or the shim over v1."""

    label: str
    """What it is, for the output: its version line, and ``v1 through the shim`` if so."""
    startup_s: float
    """Median seconds of its ``version``: what each of Harbor's calls pays to start."""
    docker_config: Path | None
    """The private ``DOCKER_CONFIG`` holding the shim; ``None``: the user's own (v2)."""


def _startup(argv: list[str]) -> float:
    """Median seconds of ``argv`` over 3 runs."""
    times = []
    for _ in range(3):
        began = time.monotonic()
        subprocess.run(argv, capture_output=True)
        times.append(time.monotonic() - began)
    return statistics.median(times)


def check_tools(root: Path) -> Compose:
    """``unshare -n`` must work; the real ``docker compose`` v2, else v1 under the shim."""
    netns = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if netns.returncode != 0:
        say_and_exit(
            f"`unshare -n` failed ({netns.stderr.strip()}): Harbor runs in a network namespace "
            "with only loopback so that it posts no telemetry; run as root (or with "
            "CAP_SYS_ADMIN)"
        )
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    if v2.returncode == 0:
        startup = _startup(["docker", "compose", "version"])
        return Compose(f"{v2.stdout.strip()} (real v2)", startup, None)
    v1 = shutil.which("docker-compose")
    if v1 is None:
        say_and_exit(
            "neither `docker compose` (v2) nor docker-compose (v1) found: Harbor calls "
            "`docker compose`; install the Compose v2 plugin (`docker-compose-plugin`), or "
            "Debian's v1 (`apt-get install docker-compose`), which this script shims"
        )
    version = subprocess.run([v1, "version", "--short"], capture_output=True, text=True)
    label = f"docker-compose {version.stdout.strip()} (v1 through the shim: no v2 here)"
    return Compose(label, _startup([v1, "version"]), write_docker_config(root, v1))


def write_docker_config(root: Path, v1: str) -> Path:
    """A private ``DOCKER_CONFIG`` whose only CLI plugin is the compose shim."""
    config = root / "docker-config"
    plugin = config / "cli-plugins" / "docker-compose"
    plugin.parent.mkdir(parents=True)
    calls = str(config / "calls.jsonl")
    plugin.write_text(SHIM.format(python=sys.executable, v1=v1, calls=calls))
    plugin.chmod(0o755)
    (config / "config.json").write_text("{}\n")
    return config


def write_tasks(home: Path, base_image: str) -> Path:
    """The pytorch suite's tasks as suite ``peer``, in the dialect both read; its path."""
    suite = home / "suites" / SUITE
    for source in load_suite("pytorch"):
        task = suite / source.task_id
        shutil.copytree(source.task_dir, task)
        toml = task / "task.toml"
        text = toml.read_text()
        if not re.search(r"(?ms)^\[task\][^\[]*^name\s*=", text):
            text = text.replace("[task]\n", f'[task]\nname = "{ORG}/{source.task_id}"\n', 1)
            toml.write_text(text)
        dockerfile = task / "environment" / "Dockerfile"
        text = re.sub(
            r"(?m)^ARG BASE_IMAGE=.*$", f"ARG BASE_IMAGE={base_image}", dockerfile.read_text()
        )
        dockerfile.write_text(text)
    return suite


@dataclass(frozen=True)
class HarborRun:
    """One ``harbor run``, measured."""

    wall_s: float
    job_s: float
    """Its own job clock (``result.json``'s start to finish)."""
    rewards: list[float]
    calls_s: list[float] | None
    """Seconds of each ``docker compose`` call (the shim over v1 counts them; v2: ``None``)."""


def harbor_run(
    harbor: Path, tasks: Path, jobs: Path, docker_config: Path | None, parallel: int
) -> HarborRun:
    """One ``harbor run`` of the tasks, ``parallel`` trials at once."""
    name = f"peer-{uuid.uuid4().hex[:6]}"
    argv = [str(harbor), "run", "-a", "oracle", "-e", "docker", "-p", str(tasks)]
    argv += ["-n", str(parallel), "-o", str(jobs), "--job-name", name, "-q", "-y"]
    netns = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    calls = None
    if docker_config is not None:
        env["DOCKER_CONFIG"] = str(docker_config)
        calls = docker_config / "calls.jsonl"
        calls.write_text("")
    log = jobs / f"{name}.log"
    began = time.monotonic()
    with log.open("wb") as out:
        done = subprocess.run([*netns, *argv], env=env, stdout=out, stderr=subprocess.STDOUT)
    took = time.monotonic() - began
    if done.returncode != 0:
        raise RuntimeError(f"harbor run exited {done.returncode}: see {log}")
    job = json.loads((jobs / name / "result.json").read_text())
    job_s = (
        (_when(job["finished_at"]) - _when(job["started_at"])) if job.get("finished_at") else took
    )
    rewards = []
    for trial in sorted((jobs / name).glob("*/result.json")):
        result = json.loads(trial.read_text())
        reward = ((result.get("verifier_result") or {}).get("rewards") or {}).get("reward")
        rewards.append(float(reward) if reward is not None else 0.0)
    calls_s = None
    if calls is not None:
        calls_s = [json.loads(line)["s"] for line in calls.read_text().splitlines()]
    return HarborRun(took, job_s, rewards, calls_s)


def _when(stamp: str) -> float:
    """Seconds since the epoch of an ISO 8601 time stamp."""
    return datetime.fromisoformat(stamp).timestamp()


async def durabench_run(
    client: Client, settings: Settings, parallel: int
) -> tuple[float, list[float]]:
    """One durabench run of suite ``peer``: seconds from request to result, each reward."""
    took, result = await one_lane_run(client, settings, SUITE, AgentSpec(name="oracle"), parallel)
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

    async def once(self, side: str, label: str) -> float:
        """Run ``side`` once, print its line (wall, score); its wall seconds."""
        extra = ""
        if side == "harbor":
            run = harbor_run(self.harbor, self.tasks, self.jobs, self.docker_config, self.parallel)
            took, rewards, calls = run.wall_s, run.rewards, run.calls_s
            extra = f" (its job clock {run.job_s:.1f} s"
            if calls is not None:
                extra += (
                    f"; {len(calls)} compose calls, median {statistics.median(calls or [0]):.2f} s"
                )
            extra += ")"
        else:
            took, rewards = await durabench_run(self.client, self.settings, self.parallel)
        print(f"{label:7} {side:9}: {took:6.1f} s{extra}, {score(rewards, self.n)}", flush=True)
        return took


async def main() -> None:
    """Warm both up, then alternate timed rounds; print each wall time and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds (>= 1)")
    parser.add_argument("--parallel", type=int, default=4, help="trials (tasks) in flight")
    parser.add_argument("--harbor", help="Harbor's executable (default: $DURABENCH_HARBOR, PATH)")
    parser.add_argument("--image", default=Settings.from_env().base_image)
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
    compose = check_tools(root)
    print(f"compose: {compose.label}; start-up (`version`, median of 3) {compose.startup_s:.2f} s")
    async with dev_server() as client:
        settings = worker_settings(client, root, args.image, "peer")
        tasks = write_tasks(settings.home, args.image)
        n = len(list(tasks.iterdir()))
        print(f"tasks: {n} ({tasks}), base image {args.image}")
        bench = Bench(
            harbor, tasks, jobs, compose.docker_config, client, settings, args.parallel, n
        )
        walls: dict[str, list[float]] = {"harbor": [], "durabench": []}
        with worker_running(settings, root / "worker.log"):
            for side in ("harbor", "durabench"):
                await bench.once(side, "warm-up")
            for r in range(1, args.rounds + 1):
                for side in ("harbor", "durabench") if r % 2 else ("durabench", "harbor"):
                    walls[side].append(await bench.once(side, f"round {r}"))
    ours, theirs = statistics.median(walls["durabench"]), statistics.median(walls["harbor"])
    print(f"median wall: durabench {ours:.1f} s, harbor {theirs:.1f} s")
    print(load_after())
    ratio = ours / theirs
    print(ratio_line("peer durabench/harbor wall", ratio, f"<= {TARGET}x", met=ratio <= TARGET))


if __name__ == "__main__":
    run_script(main)
