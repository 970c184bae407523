"""A restarted worker ends what its dead predecessor on this host left running.

A worker killed (kill -9, OOM, power) mid-activity leaves the activity's attempt started
on the server with nobody to finish it; Temporal would notice only when its heartbeat
timeout (30 s) or start-to-close timeout ran out, and the attempt would stand still that
long. The next worker of the same host knows better: an attempt started by another
worker of its host (identities end ``@<host id>``) whose process is gone is an orphan.
Before it polls, it fails each with a retryable ``WorkerLost`` that asks for a retry at
once, so the retry (a re-attach, for ``run_agent``) lands on it within a second.

Candidates are the attempt workflows that run (visibility); their pending activities
say who started them. It also resets their sticky queue (the dead worker's cache): their
next workflow task goes to a live worker at once rather than after the sticky timeout.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import NamedTuple

from temporalio.api.enums.v1 import PendingActivityState
from temporalio.api.workflowservice.v1 import ResetStickyTaskQueueRequest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from durabench.logs import get_logger

__all__ = [
    "OrphanedAttempt",
    "end_orphaned_attempts",
    "started_by_dead_peer",
    "worker_identity",
]

log = get_logger("durabench.worker")

LOST = "WorkerLost"
"""Type of the failure an orphaned attempt ends with (retryable: it is not a leaf of
``durabench.errors.NON_RETRYABLE``)."""
RETRY_AT_ONCE = timedelta(milliseconds=200)
"""The retry delay asked for, instead of the policy's backoff."""
_QUERY = "WorkflowType = 'AgentRunWorkflow' AND ExecutionStatus = 'Running'"
_AT_ONCE = 16
"""Workflows described at a time."""


class OrphanedAttempt(NamedTuple):
    """An activity attempt a dead worker of this host had started, ended for a retry."""

    workflow_id: str
    activity: str
    worker: str
    """The dead worker's identity."""


def worker_identity(host_id: str) -> str:
    """``<pid>-<random>@<host id>``: unique per process, even where pids repeat (containers)."""
    return f"{os.getpid()}-{secrets.token_hex(3)}@{host_id}"


async def end_orphaned_attempts(
    client: Client, host_id: str, identity: str
) -> list[OrphanedAttempt]:
    """Fail the attempts other workers of ``host_id`` started, so they retry now.

    Call it before this worker (``identity``) polls its host queue: then no attempt it
    fails can be one of its own. Failures to list or fail are logged, not raised: the
    heartbeat timeout still ends those attempts, later.
    """
    try:
        ids = [(w.id, w.run_id) async for w in client.list_workflows(_QUERY)]
    except RPCError as exc:
        log.warning("listing running attempts failed (orphans wait out their timeouts)",
                    error=str(exc))  # fmt: skip
        return []
    gate = asyncio.Semaphore(_AT_ONCE)

    async def one(workflow_id: str, run_id: str | None) -> list[OrphanedAttempt]:
        async with gate:
            return await _end_in(client, workflow_id, run_id, host_id, identity)

    async with asyncio.TaskGroup() as group:
        found = [group.create_task(one(w, r)) for w, r in ids]
    ended = [o for task in found for o in task.result()]
    for o in ended:
        log.info("ended an orphaned attempt for a retry", workflow=o.workflow_id,
                 activity=o.activity, dead_worker=o.worker)  # fmt: skip
    return ended


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one we may not signal included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def started_by_dead_peer(
    started_by: str, host_id: str, identity: str, alive: Callable[[int], bool] = _pid_alive
) -> bool:
    """Whether ``started_by`` is a dead worker of ``host_id`` (``identity`` being this one).

    Another worker of the host whose pid still runs here may be alive (``worker.py`` and
    the in-process worker of ``starter run`` share a home's host id): it is left to its
    heartbeats. A pid that is this process's own was an earlier life of it (a restarted
    container numbers its processes alike).
    """
    if not started_by.endswith(f"@{host_id}") or started_by == identity:
        return False
    pid = started_by.removesuffix(f"@{host_id}").split("-", 1)[0]
    if not pid.isdigit() or int(pid) == os.getpid():
        return True
    return not alive(int(pid))


async def _end_in(
    client: Client, workflow_id: str, run_id: str | None, host_id: str, identity: str
) -> list[OrphanedAttempt]:
    """End the orphaned attempts of one workflow; reset its stickiness if it had any."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    try:
        desc = await handle.describe()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            log.warning("describing an attempt failed", workflow=workflow_id, error=str(exc))
        return []
    ended = []
    for pending in desc.raw_description.pending_activities:
        was = pending.last_worker_identity
        started = pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        if not started or not started_by_dead_peer(was, host_id, identity):
            continue
        attempt = client.get_async_activity_handle(
            workflow_id=workflow_id, run_id=desc.run_id, activity_id=pending.activity_id
        )
        error = ApplicationError(
            f"worker {was} of host {host_id} died while this ran; the attempt is retried "
            f"at once (worker {identity} took over the host)",
            type=LOST,
            next_retry_delay=RETRY_AT_ONCE,
        )
        try:
            await attempt.fail(error)
        except RPCError as exc:  # it ended meanwhile
            log.debug("an orphaned attempt ended meanwhile", workflow=workflow_id, error=str(exc))
            continue
        ended.append(OrphanedAttempt(workflow_id, pending.activity_type.name, was))
    if ended:
        await _reset_sticky(client, workflow_id, desc.run_id)
    return ended


async def _reset_sticky(client: Client, workflow_id: str, run_id: str) -> None:
    """Send the workflow's next task to the normal queue, not the dead worker's cache."""
    request = ResetStickyTaskQueueRequest(namespace=client.namespace)
    request.execution.workflow_id, request.execution.run_id = workflow_id, run_id
    try:
        await client.workflow_service.reset_sticky_task_queue(request)
    except RPCError as exc:
        log.debug("resetting stickiness failed", workflow=workflow_id, error=str(exc))
