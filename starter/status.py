"""``python -m starter status [<run-id>] [--watch]``: recent runs, a run's state, live progress."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
)
from temporalio.service import RPCError

from durabench.models.results import RunResult
from durabench.models.suite_run import RunOutcome
from durabench.results.report import note_of
from durabench.results.store import pulled
from durabench.settings.values import Settings
from runtime.client import connect
from runtime.temporal_profile import load_settings
from starter.console import (
    ANSWER_WITHIN,
    approval_hint,
    console,
    plan_table,
    progress_line,
    result_tables,
    shown,
    ui_url,
)
from starter.options import failure_message, run_async
from starter.queries import run_plan, run_progress
from starter.status_history import has_workers, print_known, read_known
from workflows import run_workflow_id
from workflows.search_attributes import MODEL, RUN_STATUS, SUITE

__all__ = ["list_main", "status", "status_main"]


async def list_main(client: Client | None = None, limit: int = 20) -> list[str]:
    """Print the most recent runs; return their ids."""
    client = client or await connect(start=False)
    table = Table(title="Recent runs")
    for col in ("run id", "state", "phase", "suite", "model", "started (UTC)"):
        table.add_column(col)
    ids = []
    async for wf in client.list_workflows('WorkflowType = "SuiteRunWorkflow"', limit=limit):
        attrs = wf.typed_search_attributes
        run_id = wf.id.removeprefix("run/")
        ids.append(run_id)
        table.add_row(
            shown(run_id),
            wf.status.name.lower() if wf.status else "?",
            shown(attrs.get(RUN_STATUS) or "-"),
            shown(attrs.get(SUITE) or "-"),
            shown(attrs.get(MODEL) or "-"),
            wf.start_time.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table if ids else "No runs yet: start one with `python -m starter run`.")
    return ids


async def status_main(
    run_id: str,
    client: Client | None = None,
    settings: Settings | None = None,
    watch: bool = False,
) -> str:
    """Print the run's state (live with ``watch``); return it (``running``, ``completed``, ...)."""
    settings = settings or load_settings()
    client = client or await connect(settings, start=False)
    handle = client.get_workflow_handle(run_workflow_id(run_id), result_type=RunOutcome)
    desc = await handle.describe()
    console.print(f"Run [bold]{run_id}[/]: {ui_url(settings, run_id)}")
    if watch and desc.status == WorkflowExecutionStatus.RUNNING:
        from starter.live import follow  # the live view: only for --watch

        try:
            await follow(client, handle)
        except WorkflowFailureError:
            pass  # reported below
        desc = await handle.describe()
    state = desc.status.name.lower() if desc.status else "unknown"
    if desc.status == WorkflowExecutionStatus.RUNNING:
        if not await _print_progress(client, handle, desc, settings, run_id):
            known = await read_known(client, settings, run_id, desc)
            print_known(known, settings, run_id, running=True)
        return state
    console.print(f"state: {state}")
    if desc.status == WorkflowExecutionStatus.FAILED:
        try:
            await handle.result()
        except WorkflowFailureError as exc:
            console.print(f"[red]The run failed:[/] {shown(failure_message(exc))}")
            console.print("Fix the cause, then start a new run with `python -m starter run`.")
    if desc.status != WorkflowExecutionStatus.COMPLETED:  # ended early: what it got done
        known = await read_known(client, settings, run_id, desc)
        print_known(known, settings, run_id, running=False)
    else:
        outcome = await handle.result()
        if outcome.status != "completed":
            console.print(f"Rejected: {shown(outcome.reason)}")
        results = Path(outcome.results_dir) / "results.json"
        if settings.results_url:  # the worker's directory is on its host: read the store's
            results = (await asyncio.to_thread(pulled, settings, run_id)).results
        if outcome.results_dir and results.exists():
            result = RunResult.model_validate_json(results.read_text())
            if result.approval is not None:
                approval = f"approved by {result.approval.approver}{note_of(result.approval)}"
                console.print(shown(approval))
            for table in result_tables(result):
                console.print(table)
            console.print(f"Results: {shown(outcome.results_dir)}")
    return state


async def _print_progress(
    client: Client,
    handle: WorkflowHandle[Any, RunOutcome],
    desc: WorkflowExecutionDescription,
    settings: Settings,
    run_id: str,
) -> bool:
    """One line of live progress (and the plan a waiting run waits on); whether one answered.

    With no worker polling the run's queue, nothing is asked: a query would wait out its
    deadline.
    """
    if not await has_workers(client, desc.task_queue):
        return False
    try:
        progress = await run_progress(handle, ANSWER_WITHIN)
        plan = None
        if progress.phase == "awaiting_approval":
            plan = await run_plan(handle, ANSWER_WITHIN)
    except RPCError:
        return False
    console.print("state: running")
    console.print(progress_line(progress))
    if plan is not None:
        console.print(plan_table(plan))
        console.print(approval_hint(settings, run_id), markup=False)
    return True


@click.command()
@click.argument("run_id", required=False)
@click.option("--watch", is_flag=True, help="Show live progress until the run ends.")
def status(run_id: str | None, watch: bool) -> None:
    """Show a run's progress or results; with no run id, list recent runs."""
    if run_id is None:
        run_async(list_main)()
    else:
        run_async(status_main)(run_id, watch=watch)
