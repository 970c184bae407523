"""``python -m starter sweep [--dry-run] [--images]``: remove what no running attempt owns.

A container belongs to one attempt (its labels name it). It is removed when that attempt's
workflow is not running any more, as Temporal tells: a crashed worker, a terminated run or
a teardown that never happened leaves nothing behind after a sweep.
"""

from __future__ import annotations

import asyncio

import click
from rich.table import Table
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from durabench.sandbox import docker_client
from durabench.sandbox.docker.cleanup import list_containers, remove_container, unused_task_images
from starter.client import connect
from starter.console import console
from starter.options import run_async
from workflows import attempt_workflow_id

__all__ = ["sweep", "sweep_main"]


async def _running(client: Client, workflow_id: str) -> bool:
    try:
        desc = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return desc.status == WorkflowExecutionStatus.RUNNING


async def sweep_main(
    dry_run: bool = False, images: bool = False, client: Client | None = None
) -> list[str]:
    """Remove (or with ``dry_run`` only list) orphaned containers; return their names."""
    client = client or await connect()
    docker = docker_client()
    try:
        table = Table(title="durabench containers")
        for col in ("container", "status", "attempt workflow", "action"):
            table.add_column(col)
        removed = []
        for c in list_containers(docker):
            wf = attempt_workflow_id(c.run_id, c.task_id, c.lane, c.attempt)
            keep = await _running(client, wf)
            action = "keep (running)" if keep else ("would remove" if dry_run else "removed")
            if not keep:
                removed.append(c.name)
                if not dry_run:
                    await asyncio.to_thread(remove_container, docker, c.name)
            table.add_row(c.name, c.status, wf, action)
        console.print(table if table.row_count else "No durabench containers.")
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
    """Remove containers whose attempt is no longer running (checked against Temporal)."""
    run_async(sweep_main)(dry_run=dry_run, images=images)
