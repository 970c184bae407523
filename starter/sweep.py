"""``python -m starter sweep [--dry-run] [--images]``: remove what no running attempt owns.

A container belongs to one placement of one attempt (its labels name them). It is removed
when that attempt's workflow is not running any more, or runs a later placement (it moved
off a host that was lost), as Temporal tells: a crashed worker, a terminated run, a lost
host that came back or a teardown that never happened leaves nothing behind after a sweep.
Workers sweep their daemon when they start and every ten minutes (the containers their
host made); ``starter sweep`` looks at every container of its deployment (the Temporal
namespace and cluster it talks to): one daemon may serve several deployments, whose
workflows this one's server does not know, and their containers are left alone.
"""

from __future__ import annotations

import asyncio

import click
from docker import DockerClient
from rich.table import Table
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from durabench.sandbox import docker_client
from durabench.sandbox.docker.cleanup import (
    LabelledContainer,
    list_containers,
    remove_container,
    unused_task_images,
)
from starter.client import connect, deployment_of
from starter.console import console
from starter.options import run_async
from workflows import attempt_workflow_id

__all__ = ["owned", "remove_orphans", "sweep", "sweep_main"]


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
    those of that deployment (:func:`starter.client.deployment_of`).
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


async def sweep_main(
    dry_run: bool = False, images: bool = False, client: Client | None = None
) -> list[str]:
    """Remove (or with ``dry_run`` only list) orphaned containers; return their names."""
    client = client or await connect()
    deployment = await deployment_of(client)
    docker = docker_client()
    try:
        table = Table(title=f"durabench containers of {deployment}")
        for col in ("container", "status", "attempt workflow", "action"):
            table.add_column(col)
        removed = []
        for c, orphan in await remove_orphans(client, docker, dry_run, deployment=deployment):
            wf = attempt_workflow_id(c.run_id, c.task_id, c.lane, c.attempt)
            action = "would remove" if dry_run else "removed"
            table.add_row(c.name, c.status, wf, action if orphan else "keep (running)")
            if orphan:
                removed.append(c.name)
        console.print(table if table.row_count else f"No durabench containers of {deployment}.")
        if images:
            tags = await asyncio.to_thread(unused_task_images, docker)
            for tag in tags:
                if not dry_run:
                    await asyncio.to_thread(docker.images.remove, tag)
            verb = "would remove" if dry_run else "removed"
            console.print(f"Task images {verb}: {', '.join(tags) or 'none'}")
        return removed
    finally:
        docker.close()


@click.command()
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.option("--images", is_flag=True, help="Also remove task images no container uses.")
def sweep(dry_run: bool, images: bool) -> None:
    """Remove containers whose attempt is no longer running (checked against Temporal).

    Only this deployment's (Temporal namespace and cluster): other users' containers on
    the same Docker host, and containers made before deployment labels, are left alone.
    """
    run_async(sweep_main)(dry_run=dry_run, images=images)
