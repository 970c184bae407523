"""A restarted worker ends what its dead predecessor on this host left running.

A worker killed (kill -9, OOM, power) mid-activity leaves the activity's attempt started
on the server with nobody to finish it; Temporal would notice only when its heartbeat
timeout (30 s) or start-to-close timeout ran out, and the attempt would stand still that
long. The next worker of the same host knows better: an attempt started by another
worker of its host (identities end ``@<host id>``) whose process is gone is an orphan.
Before it polls, it fails each with a retryable ``WorkerLost`` that asks for a retry at
once, so the retry (a re-attach, for ``run_agent``) lands on it within a second.

Candidates are the attempt workflows that run (visibility); their pending activities
say who started them, and :mod:`runtime.worker_place` whether that worker is dead (what
it cannot tell is left to the heartbeat timeout). Each is failed by its attempt, not by
its activity id: between the describe and the fail, another worker of the host may have
taken over first and its retry be running, and that retry must not be failed. It also
resets their sticky queue (the dead worker's cache): their next workflow task goes to a
live worker at once rather than after the sticky timeout.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import NamedTuple

from temporalio.api.enums.v1 import EventType, PendingActivityState
from temporalio.api.workflowservice.v1 import (
    DescribeNamespaceRequest,
    ResetStickyTaskQueueRequest,
)
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from durabench.logs import get_logger
from runtime.task_token import AttemptKey, task_token
from runtime.worker_place import WorkerPlace, dead_peer, identity_at, this_place

__all__ = [
    "OrphanedAttempt",
    "StartedAttempt",
    "end_orphaned_attempts",
    "fail_attempt",
    "started_attempts",
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


class StartedAttempt(NamedTuple):
    """A started activity attempt, as a describe of its workflow saw it."""

    workflow_id: str
    run_id: str
    activity_id: str
    activity: str
    """The activity's type."""
    attempt: int
    worker: str
    """The identity of the worker that started it."""


def worker_identity(host_id: str) -> str:
    """This process's identity as a worker of ``host_id``, ending ``@<host id>``.

    Unique per process, with what a peer needs to tell it is dead
    (:mod:`runtime.worker_place`).
    """
    return identity_at(this_place(), host_id)


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
    gate, here = asyncio.Semaphore(_AT_ONCE), this_place()

    async def one(workflow_id: str, run_id: str | None) -> list[OrphanedAttempt]:
        async with gate:
            return await _end_in(client, workflow_id, run_id, host_id, identity, here)

    async with asyncio.TaskGroup() as group:
        found = [group.create_task(one(w, r)) for w, r in ids]
    ended = [o for task in found for o in task.result()]
    for o in ended:
        log.info("ended an orphaned attempt for a retry", workflow=o.workflow_id,
                 activity=o.activity, dead_worker=o.worker)  # fmt: skip
    return ended


def started_by_dead_peer(
    started_by: str, host_id: str, identity: str, here: WorkerPlace | None = None
) -> bool:
    """Whether ``started_by`` is a dead worker of ``host_id`` (``identity`` being this one).

    A worker that may be alive is left to its heartbeats: another worker of the host in
    this process or on this machine (``worker.py`` and the in-process worker of
    ``starter run`` share a home's host id), one in a sibling container, one that
    recorded no place (see :func:`runtime.worker_place.dead_peer`).
    """
    if not started_by.endswith(f"@{host_id}") or started_by == identity:
        return False
    return dead_peer(started_by, host_id, here)


async def started_attempts(
    client: Client, workflow_id: str, run_id: str | None = None
) -> list[StartedAttempt]:
    """The activity attempts of the workflow that run now (none once it is gone)."""
    try:
        desc = await client.get_workflow_handle(workflow_id, run_id=run_id).describe()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            log.warning("describing an attempt failed", workflow=workflow_id, error=str(exc))
        return []
    started = PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
    return [
        StartedAttempt(
            workflow_id,
            desc.run_id,
            p.activity_id,
            p.activity_type.name,
            p.attempt,
            p.last_worker_identity,
        )
        for p in desc.raw_description.pending_activities
        if p.state == started
    ]


async def fail_attempt(client: Client, attempt: StartedAttempt, error: ApplicationError) -> bool:
    """Fail that attempt and no other; ``False`` when it ended meanwhile (or it cannot)."""
    try:
        key = AttemptKey(
            await _namespace_id(client),
            attempt.workflow_id,
            attempt.run_id,
            await _scheduled_event_id(client, attempt),
            attempt.attempt,
            attempt.activity_id,
        )
        await client.get_async_activity_handle(task_token=task_token(key)).fail(error)
    except RPCError as exc:
        quiet = exc.status == RPCStatusCode.NOT_FOUND  # it ended, or a retry runs now
        (log.debug if quiet else log.warning)(
            "an attempt was not failed", workflow=attempt.workflow_id,
            attempt=attempt.attempt, error=str(exc),
        )  # fmt: skip
        return False
    return True


async def _namespace_id(client: Client) -> str:
    request = DescribeNamespaceRequest(namespace=client.namespace)
    return str((await client.workflow_service.describe_namespace(request)).namespace_info.id)


async def _scheduled_event_id(client: Client, attempt: StartedAttempt) -> int:
    """The event that scheduled the activity: the server's key of its attempts.

    Raises:
        RPCError: NOT_FOUND when the history holds no such activity.
    """
    handle = client.get_workflow_handle(attempt.workflow_id, run_id=attempt.run_id)
    scheduled = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    found = [
        event.event_id
        async for event in handle.fetch_history_events()
        if event.event_type == scheduled
        and event.activity_task_scheduled_event_attributes.activity_id == attempt.activity_id
    ]
    if not found:
        raise RPCError(f"no activity {attempt.activity_id} scheduled", RPCStatusCode.NOT_FOUND, b"")
    return found[-1]


async def _end_in(
    client: Client,
    workflow_id: str,
    run_id: str | None,
    host_id: str,
    identity: str,
    here: WorkerPlace,
) -> list[OrphanedAttempt]:
    """End the orphaned attempts of one workflow; reset its stickiness if it had any."""
    ended = []
    for attempt in await started_attempts(client, workflow_id, run_id):
        was = attempt.worker
        if not started_by_dead_peer(was, host_id, identity, here):
            continue
        error = ApplicationError(
            f"worker {was} of host {host_id} died while this ran; the attempt is retried "
            f"at once (worker {identity} took over the host)",
            type=LOST,
            next_retry_delay=RETRY_AT_ONCE,
        )
        if await fail_attempt(client, attempt, error):
            ended.append(OrphanedAttempt(workflow_id, attempt.activity, was))
    if ended:
        await _reset_sticky(client, workflow_id, attempt.run_id)
    return ended


async def _reset_sticky(client: Client, workflow_id: str, run_id: str) -> None:
    """Send the workflow's next task to the normal queue, not the dead worker's cache."""
    request = ResetStickyTaskQueueRequest(namespace=client.namespace)
    request.execution.workflow_id, request.execution.run_id = workflow_id, run_id
    try:
        await client.workflow_service.reset_sticky_task_queue(request)
    except RPCError as exc:
        log.debug("resetting stickiness failed", workflow=workflow_id, error=str(exc))
