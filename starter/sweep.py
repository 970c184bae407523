"""``python -m starter sweep [--dry-run] [--images]``: remove what no running attempt owns.

Which containers are orphans is :mod:`runtime.sweep`'s to say; workers sweep their own
host's when they start and every ten minutes. ``starter sweep`` looks at every container
of its deployment (the Temporal namespace and cluster it talks to): one daemon may serve
several deployments, whose workflows this one's server does not know, and their
containers are left alone.
"""

from __future__ import annotations

import asyncio

import click
from docker import DockerClient
from rich.table import Table
from temporalio.client import Client

from durabench.errors import DockerUnavailable
from durabench.sandbox import docker_client
from durabench.sandbox.docker.cleanup import LabelledContainer, unused_task_images
from runtime.client import connect, deployment_of
from runtime.sweep import remove_orphans, remove_remote_orphans
from runtime.temporal_profile import load_settings
from starter.console import console
from starter.options import run_async
from workflows import attempt_workflow_id

__all__ = ["sweep", "sweep_main"]


async def sweep_main(
    dry_run: bool = False, images: bool = False, client: Client | None = None
) -> list[str]:
    """Remove (or with ``dry_run`` only list) orphaned containers; return their names.

    On Daytona the local daemon is optional (a Daytona-only worker has none): its
    containers are swept when it answers, and the deployment's Daytona sandboxes always.

    Raises:
        DockerUnavailable: the Docker backend, and no daemon answers.
    """
    client = client or await connect()
    deployment = await deployment_of(client)
    on_daytona = load_settings().sandbox == "daytona"
    docker = _local_docker(optional=on_daytona)
    try:
        found = []
        if docker is not None:
            found += await remove_orphans(client, docker, dry_run, deployment=deployment)
        if on_daytona:  # and its sandboxes on Daytona
            found += await remove_remote_orphans(client, deployment, dry_run)
        removed = _show(found, deployment, dry_run)
        if images:
            await _sweep_images(docker, dry_run)
        return removed
    finally:
        if docker is not None:
            docker.close()


def _local_docker(optional: bool) -> DockerClient | None:
    """This machine's daemon; ``None`` when it does not answer and may be absent."""
    try:
        return docker_client()
    except DockerUnavailable:
        if not optional:
            raise
        console.print("No Docker daemon here: only the deployment's Daytona sandboxes.")
        return None


def _show(found: list[tuple[LabelledContainer, bool]], deployment: str, dry_run: bool) -> list[str]:
    """Print what was found and done; the names removed (or that would be)."""
    table = Table(title=f"durabench containers of {deployment}")
    for col in ("container", "status", "attempt workflow", "action"):
        table.add_column(col)
    removed = []
    for c, orphan in found:
        wf = attempt_workflow_id(c.run_id, c.task_id, c.lane, c.attempt)
        action = "would remove" if dry_run else "removed"
        table.add_row(c.name, c.status, wf, action if orphan else "keep (running)")
        if orphan:
            removed.append(c.name)
    console.print(table if table.row_count else f"No durabench containers of {deployment}.")
    return removed


async def _sweep_images(docker: DockerClient | None, dry_run: bool) -> None:
    if docker is None:
        console.print("Task images: none here (no Docker daemon; Daytona builds its own).")
        return
    tags = await asyncio.to_thread(unused_task_images, docker)
    for tag in tags:
        if not dry_run:
            await asyncio.to_thread(docker.images.remove, tag)
    verb = "would remove" if dry_run else "removed"
    console.print(f"Task images {verb}: {', '.join(tags) or 'none'}")


@click.command()
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.option("--images", is_flag=True, help="Also remove task images no container uses.")
def sweep(dry_run: bool, images: bool) -> None:
    """Remove containers whose attempt is no longer running (checked against Temporal).

    Only this deployment's (Temporal namespace and cluster): other users' containers on
    the same Docker host, and containers made before deployment labels, are left alone.
    """
    run_async(sweep_main)(dry_run=dry_run, images=images)
