"""How long a run stands still when its worker is killed: kill -9 mid-agent, restart, resume.

``python bench/resume.py [--n 4] [--parallel 2] [--down 0]``

The worker is ``_worker.py`` in its own process (real workflows, instant activities).

- cold start: a run is planned and approved while no worker runs; a fresh worker starts.
  Measured: worker spawn -> first attempt recorded.
- resume: a worker runs the agents of every pair in flight (they run and heartbeat until
  the process dies); it is killed with SIGKILL; ``--down`` seconds later a fresh worker
  starts. Measured: worker spawn -> first attempt recorded, and from the kill.

The ratio is resume over cold start: what a kill -9 costs beyond starting a worker. The
target is restart -> first attempt recorded within 10 s, whatever the heartbeat
timeout: a restarted worker ends its host's orphaned attempts so they retry at once.
Both are rounds of the load guard (``_load.py``): repeated while the machine is busy,
and no ratio unless both were calm.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import LoadGuard, add_tries, approve, dev_server, machine, start_run
from temporalio.client import Client

WORKER = Path(__file__).with_name("_worker.py")
TARGET_S = 10.0
"""Restart -> first attempt recorded, at most."""


class WorkerProcess:
    """A ``_worker.py`` process and the events it prints."""

    def __init__(self, proc: asyncio.subprocess.Process, spawned: float) -> None:
        self.proc, self.spawned = proc, spawned
        self.events: dict[str, list[float]] = defaultdict(list)
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def spawn(cls, client: Client, queue: str, tasks: int, agent: str) -> WorkerProcess:
        """Start a worker; ``spawned`` is the monotonic time just before."""
        address = client.service_client.config.target_host
        args = ["--address", address, "--queue", queue, "--tasks", str(tasks)]
        spawned = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(WORKER), *args, "--agent", agent, "--events",
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        return cls(proc, spawned)

    async def _read(self) -> None:
        if self.proc.stdout is None:
            return
        async for line in self.proc.stdout:
            event = json.loads(line)
            self.events[event["event"]].append(event["t"])
            self._changed.set()

    async def when(self, event: str, count: int = 1, timeout_s: float = 180) -> float:
        """Monotonic time of the ``count``-th ``event``, waiting for it."""
        async with asyncio.timeout(timeout_s):
            while len(self.events[event]) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.events[event][count - 1]

    async def stop(self, sig: int = signal.SIGTERM) -> None:
        """Signal the worker and wait for it to exit."""
        self.proc.send_signal(sig)
        await self.proc.wait()
        await self._reader


async def cold(client: Client, n: int, parallel: int) -> float:
    """Seconds from a fresh worker's spawn to the first recorded attempt of an approved run."""
    queue = f"bench-cold-{uuid.uuid4().hex[:8]}"
    planner = await WorkerProcess.spawn(client, queue, n, "instant")
    handle = await start_run(client, queue, n, parallel, run_id=queue)
    await planner.stop()
    await approve(handle)
    worker = await WorkerProcess.spawn(client, queue, n, "instant")
    try:
        first = await worker.when("recorded") - worker.spawned
        await handle.result()
    finally:
        await worker.stop()
    return first


async def resume(client: Client, n: int, parallel: int, down: float) -> tuple[float, float, float]:
    """Seconds from the new worker's spawn, and from the kill, to the first recorded attempt.

    Also the seconds from the kill to the first agent phase the new worker runs.
    """
    queue = f"bench-resume-{uuid.uuid4().hex[:8]}"
    doomed = await WorkerProcess.spawn(client, queue, n, "hang")
    handle = await start_run(client, queue, n, parallel, run_id=queue)
    await approve(handle)
    await doomed.when("agent", count=2 * min(n, parallel))  # every arm in flight is in its agent
    killed = time.monotonic()
    await doomed.stop(signal.SIGKILL)
    await asyncio.sleep(down)
    worker = await WorkerProcess.spawn(client, queue, n, "instant")
    try:
        recorded = await worker.when("recorded")
        agent = await worker.when("agent")
        outcome = await handle.result()
    finally:
        await worker.stop()
    if outcome.status != "completed":
        raise RuntimeError(f"the resumed run ended {outcome.status}")
    return recorded - worker.spawned, recorded - killed, agent - killed


async def main() -> None:
    """Measure a cold start, then a resume after kill -9; print both and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4, help="tasks per run")
    parser.add_argument("--parallel", type=int, default=2, help="pairs in flight")
    parser.add_argument("--down", type=float, default=0.0, help="seconds with no worker")
    add_tries(parser)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"tasks: {args.n}, parallel: {args.parallel}, worker down for {args.down:g} s")
    guard = LoadGuard(tries=args.tries)
    async with dev_server() as client:
        started = await guard.round("cold start", lambda: cold(client, args.n, args.parallel))
        print(f"cold start: spawn -> first attempt recorded: {started:.2f} s")
        restart, since_kill, agent = await guard.round(
            "resume", lambda: resume(client, args.n, args.parallel, args.down)
        )
    print(
        f"resume after kill -9: restart -> first attempt recorded: {restart:.2f} s "
        f"(kill -> agent phase retried: {agent:.2f} s; kill -> recorded: {since_kill:.2f} s)"
    )
    own = restart / started
    print(guard.ratio_line("resume (restart -> first attempt) / cold start", own, None))
    print(
        guard.ratio_line(
            "restart -> first attempt recorded / 10 s target",
            restart / TARGET_S,
            "<= 1.00x",
            met=restart <= TARGET_S,
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
