"""What Ctrl-C leaves behind: a run that goes on without this process, and how to end it.

The in-process worker stops with the command, but the run is Temporal's: unapproved, it
waits for approval until its timeout (a day by default); approved, it waits for a worker.
Neither should be left silently, so the person is told the exact command that ends it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import click
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError

from starter.console import errors
from starter.route import no_worker_route
from workflows.search_attributes import RUN_STATUS

__all__ = ["INTERRUPTED_EXIT", "left_behind"]

INTERRUPTED_EXIT = 130
"""Exit status after Ctrl-C, as a shell reports a process ended by SIGINT."""

_WAITING = {"planning", "awaiting_approval"}


async def left_behind(handle: WorkflowHandle[Any, Any], run_id: str) -> click.exceptions.Exit:
    """Say what the interrupted run does now and how to end it; the exit to leave with."""
    try:
        desc = await handle.describe(rpc_timeout=timedelta(seconds=5))
    except RPCError:
        desc = None
    if desc is not None and desc.status != WorkflowExecutionStatus.RUNNING:
        return click.exceptions.Exit(INTERRUPTED_EXIT)
    phase = desc.typed_search_attributes.get(RUN_STATUS) if desc is not None else None
    said = "still waits for approval" if phase in _WAITING or phase is None else "goes on"
    errors.print(
        f"Interrupted: run {run_id} {said}, with no worker now: {no_worker_route(run_id, phase)}",
        markup=False,
        highlight=False,
    )
    return click.exceptions.Exit(INTERRUPTED_EXIT)
