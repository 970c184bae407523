"""A durabench worker in its own process, with instant activities: ``scale`` and ``resume``.

A separate process so that its peak RSS is the worker's alone and so that it can be killed
with SIGKILL. It runs the real workflows with the fake activities of ``_common`` (or the
stand-in pair); with ``--events`` it prints one JSON line per event on stdout, stamped with
``time.monotonic()`` (one clock for every process on Linux)::

    {"event": "polling", "t": ...}       the worker polls
    {"event": "agent", "t": ...}         an agent phase started
    {"event": "recorded", "t": ...}      an attempt's result was recorded

``--agent hang`` makes agents run (heartbeating every second) until the process dies.
SIGTERM shuts the worker down gracefully. As ``worker.py`` does, it first ends the
attempts a dead worker of its host left (every bench worker is host ``bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import instant_activities
from _workflows import StandInPair
from temporalio import activity
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from activities.pair_ends import PairActivities
from durabench.logs import configure_logging
from durabench.models.attempt import AttemptRef
from durabench.models.results import AttemptResult
from durabench.settings.values import Settings
from runtime.orphans import end_orphaned_attempts, worker_identity
from runtime.workflow_runner import workflow_runner
from workflows import WORKFLOWS, SuiteRunWorkflow

HOST = "bench"


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--tasks", type=int, required=True)
    parser.add_argument("--pairs", choices=("full", "stand-in"), default="full")
    parser.add_argument("--agent", choices=("instant", "hang"), default="instant")
    parser.add_argument("--events", action="store_true")
    return parser.parse_args()


def _emitter(on: bool) -> Any:
    def emit(event: str) -> None:
        if on:
            sys.stdout.write(json.dumps({"event": event, "t": time.monotonic()}) + "\n")
            sys.stdout.flush()

    return emit


async def main() -> None:
    """Work until SIGTERM."""
    args = _parse()
    configure_logging("warning")  # on stderr: stdout carries the events
    emit = _emitter(args.events)

    async def agent(ref: AttemptRef) -> None:
        emit("agent")
        while args.agent == "hang":
            activity.heartbeat("running")
            await asyncio.sleep(1.0)

    def on_record(result: AttemptResult) -> None:
        emit("recorded")

    task_ids = [f"t{i:05d}" for i in range(args.tasks)]
    client = await Client.connect(args.address, data_converter=pydantic_data_converter)
    workflows = list(WORKFLOWS) if args.pairs == "full" else [SuiteRunWorkflow, StandInPair]
    identity = worker_identity(HOST)
    home = Path(tempfile.mkdtemp(prefix="durabench-bench-"))  # no accounts: nothing to scrub
    pairs = PairActivities(client, Settings(home=home, task_queue=args.queue))
    worker = Worker(
        client,
        task_queue=args.queue,
        identity=identity,
        workflows=workflows,
        workflow_runner=workflow_runner(),
        activities=[
            *instant_activities(args.queue, task_ids, agent=agent, on_record=on_record),
            pairs.await_pairs,  # pairs carried over continue-as-new
        ],
    )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await end_orphaned_attempts(client, HOST, identity)
    running = asyncio.create_task(worker.run())
    emit("polling")
    await stop.wait()
    await worker.shutdown()
    await running


if __name__ == "__main__":
    asyncio.run(main())
