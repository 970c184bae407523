"""A durabench worker: ``python worker.py``.

Polls the shared task queue (workflows, planning, results) and its own host queue (every
phase that touches this machine's containers). Run one per machine with a Docker daemon;
``python -m starter run`` runs one in-process unless ``--detach``.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence

from temporalio.client import Client
from temporalio.worker import Worker

from activities import PlanActivities, ResultActivities, SandboxActivities, ServiceActivities
from durabench.errors import DurabenchError
from durabench.logs import configure_logging, get_logger
from durabench.sandbox import docker_client
from durabench.settings import Settings
from workflows import WORKFLOWS

__all__ = ["build_workers", "main", "run_workers"]

log = get_logger("durabench.worker")


def build_workers(client: Client, settings: Settings, *, max_sandboxes: int = 8) -> list[Worker]:
    """The shared-queue worker and this host's queue worker."""
    # Stable across restarts: a restarted worker picks up its attempts' container phases.
    host_queue = f"{settings.task_queue}/host/{settings.host_id}"
    sandbox = SandboxActivities(settings, host_queue)
    plan, results = PlanActivities(settings), ResultActivities(settings)
    service = ServiceActivities(settings)
    shared = Worker(
        client,
        task_queue=settings.task_queue,
        workflows=list(WORKFLOWS),
        activities=[
            plan.plan_run,
            plan.plan_page,
            plan.record_run,
            results.record_attempt,
            results.write_report,
            sandbox.get_host_queue,
            service.evaluate_attempt,
            service.score_run,
        ],
    )
    host = Worker(
        client,
        task_queue=host_queue,
        activities=[
            sandbox.prepare_image,
            sandbox.provision_sandbox,
            sandbox.run_agent,
            sandbox.verify,
            sandbox.classify_attempt,
            sandbox.collect_artifacts,
            sandbox.teardown_sandbox,
        ],
        max_concurrent_activities=max_sandboxes,
    )
    return [shared, host]


async def run_workers(workers: Sequence[Worker], stop: asyncio.Event) -> None:
    """Run ``workers`` until ``stop`` is set, then shut them down gracefully."""
    runs = [asyncio.create_task(w.run()) for w in workers]
    await stop.wait()
    await asyncio.gather(*(w.shutdown() for w in workers))
    await asyncio.gather(*runs, return_exceptions=True)


async def main() -> None:
    """Connect (starting the embedded server if needed) and work until SIGINT/SIGTERM."""
    from starter.client import connect

    configure_logging("info")
    settings = Settings.from_env()
    docker_client().close()  # fail now, with the fix, rather than in every attempt
    client = await connect(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    workers = build_workers(client, settings)
    log.info("worker started", task_queue=settings.task_queue, address=settings.address)
    await run_workers(workers, stop)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except DurabenchError as exc:
        raise SystemExit(f"error: {exc}") from None
