"""``python -m starter status <run-id>``: where a run is, or how it ended."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import click
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.service import RPCError

from durabench.models import RunResult
from durabench.settings import Settings
from starter.client import connect
from starter.console import console, progress_line, result_tables, ui_url
from starter.options import failure_message, run_async, run_id_argument
from workflows import SuiteRunWorkflow, run_workflow_id

__all__ = ["status", "status_main"]


async def status_main(
    run_id: str, client: Client | None = None, settings: Settings | None = None
) -> str:
    """Print the run's state; return it (``running``, ``completed``, ``failed``, ...)."""
    settings = settings or Settings.from_env()
    client = client or await connect(settings)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    desc = await handle.describe()
    state = desc.status.name.lower() if desc.status else "unknown"
    console.print(f"Run [bold]{run_id}[/]: {state}; Web UI: {ui_url(settings, run_id)}")
    if desc.status == WorkflowExecutionStatus.RUNNING:
        try:
            progress = await handle.query(
                SuiteRunWorkflow.progress, rpc_timeout=timedelta(seconds=5)
            )
            console.print(progress_line(progress))
        except RPCError:
            console.print(
                "No worker answers for this run: start one with `python worker.py` "
                "(or `python -m starter run` again for a new run)."
            )
    elif desc.status == WorkflowExecutionStatus.FAILED:
        try:
            await handle.result()
        except WorkflowFailureError as exc:
            console.print(f"[red]The run failed:[/] {failure_message(exc)}")
            console.print("Fix the cause, then start a new run with `python -m starter run`.")
    elif desc.status == WorkflowExecutionStatus.COMPLETED:
        outcome = await handle.result()
        if outcome.status != "completed":
            console.print(f"Rejected: {outcome.reason}")
        results = Path(outcome.results_dir) / "results.json"
        if outcome.results_dir and results.exists():
            for table in result_tables(RunResult.model_validate_json(results.read_text())):
                console.print(table)
            console.print(f"Results: {outcome.results_dir}")
    return state


@click.command()
@run_id_argument
def status(run_id: str) -> None:
    """Show a run's progress, or its results once it has ended."""
    run_async(status_main)(run_id)
