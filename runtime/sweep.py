"""Which durabench containers no running attempt owns, and removing them.

A container belongs to one placement of one attempt (its labels name them). It is an
orphan when that attempt's workflow is not running any more, or runs a later placement (it
moved off a host that was lost), as Temporal tells: a crashed worker, a terminated run, a
lost host that came back or a teardown that never happened leaves nothing behind. Workers
sweep their own host's containers when they start and every ten minutes
(:func:`sweep_every`); ``python -m starter sweep`` looks at every container of its
deployment.
"""

from __future__ import annotations

import asyncio
import contextlib

from docker import DockerClient
from docker.errors import DockerException
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from durabench.errors import DockerUnavailable, DurabenchError
from durabench.logs import get_logger
from durabench.sandbox import docker_client
from durabench.sandbox.docker.cleanup import LabelledContainer, list_containers, remove_container
from workflows import attempt_workflow_id

__all__ = ["SWEEP_PERIOD_S", "owned", "remove_orphans", "remove_remote_orphans", "sweep_every"]

log = get_logger("durabench.worker")

SWEEP_PERIOD_S = 600.0
"""How often a worker removes orphaned containers from its daemon."""
_QUERY_TIMEOUT_S = 3.0
"""A live worker answers in milliseconds; with none, the container is kept after this."""


async def owned(client: Client, container: LabelledContainer) -> bool:
    """Whether the container's attempt still runs, at the container's placement.

    When in doubt (no worker answers the query in time) the container is kept.
    """
    wf = attempt_workflow_id(container.run_id, container.task_id, container.lane, container.attempt)
    handle = client.get_workflow_handle(wf)
    try:
        desc = await handle.describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    if desc.status != WorkflowExecutionStatus.RUNNING:
        return False
    try:
        query = handle.query("placement", result_type=int)
        current = await asyncio.wait_for(query, timeout=_QUERY_TIMEOUT_S)
    except (RPCError, WorkflowQueryFailedError, TimeoutError):
        return True
    return bool(current <= container.placement)


async def remove_orphans(
    client: Client,
    docker: DockerClient,
    dry_run: bool = False,
    host: str | None = None,
    deployment: str | None = None,
) -> list[tuple[LabelledContainer, bool]]:
    """Durabench's containers on ``docker``, each with whether it is (or would be) removed.

    With ``host``, only the containers that worker host made; with ``deployment``, only
    those of that deployment (:func:`runtime.client.deployment_of`).
    """
    out = []
    for c in await asyncio.to_thread(list_containers, docker):
        if host is not None and c.host != host:
            continue
        if deployment is not None and c.deployment != deployment:
            continue
        orphan = not await owned(client, c)
        if orphan and not dry_run:
            await asyncio.to_thread(remove_container, docker, c.name)
        out.append((c, orphan))
    return out


async def remove_remote_orphans(
    client: Client, deployment: str, dry_run: bool = False
) -> list[tuple[LabelledContainer, bool]]:
    """The deployment's Daytona sandboxes, each with whether it is (or would be) removed.

    Daytona's organisation is shared like a daemon: only sandboxes labelled with this
    deployment are looked at. Daytona's auto-stop and auto-delete catch what a sweep
    that never runs would miss.

    Raises:
        SandboxError: Daytona failed past its retries.
    """
    from durabench.sandbox.daytona import DaytonaOptions, listed_sandboxes, remove_sandboxes

    options = DaytonaOptions.from_env()
    out = []
    for sb in await listed_sandboxes(options, deployment):
        orphan = not await owned(client, sb)
        if orphan and not dry_run:
            await remove_sandboxes(options, [sb.name])
        out.append((sb, orphan))
    return out


async def _sweep_local(client: Client, host: str, optional: bool) -> None:
    """This host's orphaned containers; with ``optional`` (Daytona) only if Docker answers."""
    try:
        docker = docker_client()
    except DockerUnavailable:
        if optional:  # a Daytona-only worker has no daemon, and made no container
            return
        raise
    try:
        swept = await remove_orphans(client, docker, host=host)
    finally:
        docker.close()
    for container, orphan in swept:
        if orphan:
            log.info("removed orphaned container", container=container.name)


async def sweep_every(
    client: Client,
    host: str,
    period_s: float,
    stop: asyncio.Event,
    remote_deployment: str | None = None,
) -> None:
    """Remove this host's orphaned containers now and every ``period_s``, until ``stop``.

    Orphans: containers of attempts that ended, or that moved off this host while it was
    lost (see ``python -m starter sweep``). Only containers this host made are looked at:
    a daemon may be shared. With ``remote_deployment``, that deployment's orphaned
    Daytona sandboxes too. A failed sweep is logged.
    """
    while not stop.is_set():
        try:
            if remote_deployment is not None:
                for sandbox, orphan in await remove_remote_orphans(client, remote_deployment):
                    if orphan:
                        log.info("removed orphaned sandbox", sandbox=sandbox.name)
            await _sweep_local(client, host, optional=remote_deployment is not None)
        except (DurabenchError, RPCError, DockerException) as exc:
            log.warning("sweeping orphaned containers failed", error=str(exc))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=period_s)
