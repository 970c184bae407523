"""``python -m starter approve|reject <run-id>``: the approval gate from the terminal."""

from __future__ import annotations

import getpass
from typing import Any

import click
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle

from durabench.errors import ConfigError
from durabench.models import Approval, Rejection, RunOutcome
from starter.client import connect
from starter.console import console
from starter.options import run_async, run_id_argument
from workflows import SuiteRunWorkflow, run_workflow_id

__all__ = ["approve", "approve_main", "reject", "reject_main"]


async def _running_handle(client: Client, run_id: str) -> WorkflowHandle[Any, RunOutcome]:
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    desc = await handle.describe()
    if desc.status != WorkflowExecutionStatus.RUNNING:
        state = desc.status.name.lower() if desc.status else "unknown"
        raise ConfigError(
            f"run {run_id} is {state}; only a running run can be approved or rejected"
        )
    return handle


async def approve_main(
    run_id: str, approver: str, note: str = "", client: Client | None = None
) -> None:
    """Send the ``approve`` signal to a running run."""
    client = client or await connect()
    handle = await _running_handle(client, run_id)
    await handle.signal(SuiteRunWorkflow.approve, Approval(approver=approver, note=note))
    console.print(f"Approval of run {run_id} sent (by {approver}).")


async def reject_main(run_id: str, reason: str, by: str, client: Client | None = None) -> None:
    """Send the ``reject`` signal: the run ends without starting anything."""
    client = client or await connect()
    handle = await _running_handle(client, run_id)
    await handle.signal(SuiteRunWorkflow.reject, Rejection(reason=reason, rejected_by=by))
    console.print(f"Rejection of run {run_id} sent: {reason}")


@click.command()
@run_id_argument
@click.option("--approver", default=getpass.getuser, show_default="your user name")
@click.option("--note", default="", help="Kept with the approval.")
def approve(run_id: str, approver: str, note: str) -> None:
    """Approve a run's plan so its pairs start."""
    run_async(approve_main)(run_id, approver, note)


@click.command()
@run_id_argument
@click.option("--reason", required=True, help="Why the run must not start.")
@click.option("--by", default=getpass.getuser, show_default="your user name")
def reject(run_id: str, reason: str, by: str) -> None:
    """Reject a run's plan: it ends without starting anything."""
    run_async(reject_main)(run_id, reason, by)
