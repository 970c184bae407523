"""How long the CLI takes to answer: ``--version``, and ``status <id>`` of a live run.

``python bench/startup.py [--k 5]``

- ``--version``: ``python -m starter --version`` in a fresh process, ``--k`` times; the
  median wall time against the 0.3 s target. Nothing but the version should load.
- ``status <id>``: ``python -m starter status <id>`` in a fresh process, ``--k`` times,
  against a run that waits for approval on this script's own dev server, its worker (the
  real workflows, instant activities) in this process, ready to answer the queries
  (``progress`` and ``plan``). The median against the 1 s target: imports, connecting,
  describing the run and the two queries, as a user waits for them.

The CPU seconds each call's process used are printed beside: what the command costs,
which a loaded machine stretches in wall time but not in CPU. One untimed call of each
comes first (the disk cache). Each set of ``--k`` calls is a
round of the load guard (``_load.py``): repeated while the machine is busy, and no ratio
unless both were calm. Where the time goes: ``python -X importtime -m starter …``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
import uuid
from typing import NamedTuple

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import (
    LoadGuard,
    add_tries,
    dev_server,
    instant_activities,
    machine,
    run_script,
    start_run,
)
from temporalio.client import Client
from temporalio.worker import Worker

from runtime.workflow_runner import workflow_runner
from workflows import WORKFLOWS

VERSION_TARGET_S = 0.3
STATUS_TARGET_S = 1.0


class Took(NamedTuple):
    """What one command took: wall seconds, and the CPU seconds its process used."""

    wall_s: float
    cpu_s: float


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def timed(argv: list[str], env: dict[str, str]) -> Took:
    """One ``argv`` in a fresh process (output discarded); it must exit 0."""
    began, cpu = time.monotonic(), _children_cpu()
    proc = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    took = Took(time.monotonic() - began, _children_cpu() - cpu)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {err.decode()[-500:]}")
    return took


async def median_of(argv: list[str], env: dict[str, str], k: int) -> Took:
    """Medians of ``k`` runs of ``argv``, after one untimed run."""
    await timed(argv, env)
    runs = [await timed(argv, env) for _ in range(k)]
    return Took(statistics.median(r.wall_s for r in runs), statistics.median(r.cpu_s for r in runs))


async def status_case(client: Client, env: dict[str, str], k: int, guard: LoadGuard) -> Took:
    """Median seconds of ``status <id>`` for a run awaiting approval, its worker ready."""
    queue = f"bench-startup-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=instant_activities(queue, ["t00000", "t00001"]),
    ):
        handle = await start_run(client, queue, tasks=2, parallel=1, run_id=queue)
        argv = [sys.executable, "-m", "starter", "status", queue]
        try:
            return await guard.round("status", lambda: median_of(argv, env, k))
        finally:
            await handle.terminate("bench done")


async def main() -> None:
    """Time both commands; print each median and its ratio to the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5, help="timed calls of each command")
    add_tries(parser)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    guard = LoadGuard(tries=args.tries)
    env = {**os.environ, "PYTHONPATH": str(_path.ROOT)}
    env["DURABENCH_HOME"] = tempfile.mkdtemp(prefix="durabench-bench-startup-")
    version = [sys.executable, "-m", "starter", "--version"]
    took_version = await guard.round("--version", lambda: median_of(version, env, args.k))
    print(
        f"python -m starter --version: median {took_version.wall_s:.3f} s of {args.k}"
        f" ({took_version.cpu_s:.3f} CPU-s)"
    )
    async with dev_server() as client:
        env["TEMPORAL_ADDRESS"] = client.service_client.config.target_host
        took_status = await status_case(client, env, args.k, guard)
    print(
        f"python -m starter status <id> (awaiting approval): median {took_status.wall_s:.3f} s"
        f" ({took_status.cpu_s:.3f} CPU-s)"
    )
    for what, took, target in (
        ("--version", took_version, VERSION_TARGET_S),
        ("status <id>", took_status, STATUS_TARGET_S),
    ):
        ratio = took.wall_s / target
        print(guard.ratio_line(f"{what} / {target:g} s target", ratio, "<= 1.00x", ratio <= 1))


if __name__ == "__main__":
    run_script(main)
