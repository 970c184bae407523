"""A durabench worker's assembly: ``python worker.py`` and ``python -m starter worker`` run it.

Polls the shared task queue (workflows, planning, results, host claims) and its own host
queue (every phase that touches this machine's containers). Run one per machine with a
Docker daemon, or several sharing one with distinct ``DURABENCH_HOST_ID``;
``python -m starter run`` runs one in-process unless ``--detach``. SIGTERM or SIGINT
stops it gracefully: activities get ``GRACE`` to finish, and agent sessions keep running
in their containers for the next worker to re-attach.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker

from activities import (
    AccountActivities,
    PairActivities,
    PlanActivities,
    ResultActivities,
    SandboxActivities,
    ServiceActivities,
    SpendActivities,
)
from durabench.gateway import ModelGateway
from durabench.logs import configure_logging, get_logger
from durabench.results.store import open_store
from durabench.sandbox import docker_client
from durabench.settings.values import Settings
from runtime.client import connect, deployment_of
from runtime.orphans import end_orphaned_attempts, worker_identity
from runtime.spend_broker import host_upkeep
from runtime.temporal_profile import load_settings
from runtime.workflow_runner import workflow_runner
from workflows import WORKFLOWS

__all__ = ["build_workers", "main", "run_workers", "start_host", "stopped"]

log = get_logger("durabench.worker")

GRACE = timedelta(seconds=20)
"""How long in-flight activities get to finish when the worker is told to stop."""
STOP_S = GRACE.total_seconds() + 10
"""The longest :func:`stopped` waits for a worker to stop: its activities' grace, and some."""
CANCEL_NOTICE = timedelta(seconds=1)
"""The longest a heartbeat of a container phase is held back (the SDK's default: 80% of
the 30 s heartbeat timeout): the agent phase beats every second, so a cancelled session
hears of it within about a second; other phases beat every 10 s, unthrottled either way."""


def build_workers(
    client: Client, settings: Settings, deployment: str, identity: str | None = None
) -> list[Worker]:
    """The shared-queue worker and this host's queue worker.

    ``deployment`` (:func:`runtime.client.deployment_of`) labels every container made, so
    a sweep of another deployment sharing the Docker daemon leaves them alone.
    ``identity`` (:func:`runtime.orphans.worker_identity`) ends ``@<host id>``.
    """
    # Stable across restarts: a restarted worker picks up its attempts' container phases.
    host_queue = f"{settings.task_queue}/host/{settings.host_id}"
    identity = identity or worker_identity(settings.host_id)
    sandbox = SandboxActivities(settings, host_queue, deployment, client)
    plan, results = PlanActivities(settings, client), ResultActivities(settings)
    service = ServiceActivities(settings)
    accounts = AccountActivities(client, settings)
    pairs = PairActivities(client, settings)
    spend = SpendActivities(client, settings)
    shared = Worker(
        client,
        task_queue=settings.task_queue,
        identity=identity,
        graceful_shutdown_timeout=GRACE,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=[
            plan.plan_run,
            plan.plan_page,
            plan.record_run,
            results.record_attempt,
            results.write_report,
            sandbox.claim_host,
            service.evaluate_attempt,
            service.score_run,
            accounts.lease_account,
            accounts.await_lease,
            accounts.release_account,
            accounts.vanished_holders,
            pairs.await_pairs,
            spend.start_pairs,
        ],
    )
    host = Worker(
        client,
        task_queue=host_queue,
        identity=identity,
        graceful_shutdown_timeout=GRACE,
        activities=[
            sandbox.provision_sandbox,
            sandbox.run_agent,
            sandbox.verify,
            sandbox.teardown_sandbox,
            sandbox.finish_sandbox,
        ],
        # Admission holds attempts to max_sandboxes, each with one phase here at a time.
        # Slack for teardowns of attempts that moved away: work queued behind a full
        # worker would look like a lost host.
        max_concurrent_activities=2 * settings.max_sandboxes + 4,
        # A cancel reaches an activity with a heartbeat's answer: container phases beat
        # every 10 s, and the workflow waits for their cancel before its teardown.
        max_heartbeat_throttle_interval=CANCEL_NOTICE,
    )
    return [shared, host]


async def start_host(client: Client, settings: Settings, deployment: str) -> list[Worker]:
    """This host's workers, once the attempts a dead worker of this host left are ended.

    They retry at once and come to these workers (see :mod:`runtime.orphans`): a worker
    restarted after kill -9 re-attaches in seconds, not after the heartbeat timeout.
    """
    identity = worker_identity(settings.host_id)
    workers = build_workers(client, settings, deployment, identity)
    await end_orphaned_attempts(client, settings.host_id, identity)
    return workers


async def _close_remote_clients() -> None:
    """Close the Daytona SDK's sessions of this loop, when the backend is installed."""
    try:
        from durabench.sandbox.daytona import close_clients
    except ImportError:
        return
    await close_clients()


async def run_workers(workers: Sequence[Worker], stop: asyncio.Event) -> None:
    """Run ``workers`` until ``stop`` is set, then shut them down gracefully.

    If one of them fails, all stop and the failure is raised: a worker that polls the
    shared queue but no longer its host queue would claim attempts it never runs.
    """
    runs = [asyncio.create_task(w.run()) for w in workers]
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait([*runs, stopped], return_when=asyncio.FIRST_COMPLETED)
    failed = [r for r in runs if r.done() and r.exception() is not None]
    await asyncio.gather(*(w.shutdown() for w in workers), return_exceptions=True)
    await asyncio.gather(*runs, stopped, return_exceptions=True)
    stopped.cancel()
    await ModelGateway.close_all()
    await _close_remote_clients()
    if failed:
        raise RuntimeError(f"a worker stopped: {failed[0].exception()}") from failed[0].exception()


async def main() -> None:
    """Connect (starting the embedded server if needed) and work until SIGINT/SIGTERM."""
    configure_logging("info")
    settings = load_settings()
    if settings.sandbox == "docker":  # fail now, with the fix, rather than in every attempt
        docker_client().close()
    open_store(settings).check()  # and the results store, before an attempt is paid for
    client = await connect(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    deployment = await deployment_of(client)
    workers = await start_host(client, settings, deployment)
    log.info(
        "worker started",
        task_queue=settings.task_queue,
        address=settings.address,
        host=settings.host_id,
        max_sandboxes=settings.max_sandboxes,
    )
    remote = deployment if settings.sandbox == "daytona" else None
    sweeper = asyncio.create_task(host_upkeep(client, settings, stop, remote))
    running = asyncio.create_task(run_workers(workers, stop))
    told = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([running, told], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.set()
        told.cancel()
        await stopped(running, sweeper)


async def stopped(workers: asyncio.Task[None], sweeper: asyncio.Task[None]) -> None:
    """Wait for :func:`run_workers` told to stop, no longer than :data:`STOP_S`.

    The sweep is only tidying (the next start sweeps again), so it stops at once. The
    workers get their activities' grace; past that, what they still run is left to
    Temporal (retried on the next worker, agents re-attached), as after a kill, so that
    Ctrl-C or SIGTERM ends the process within a bound whatever a call still waits on.
    Raises what a failed worker raised.
    """
    sweeper.cancel()
    await asyncio.wait([workers, sweeper], timeout=STOP_S)
    if not workers.done():
        log.warning("the worker did not stop in time: leaving what it runs", after_s=STOP_S)
        workers.cancel()
        return
    workers.result()
