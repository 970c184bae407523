"""``python -m starter approve|reject <run-id>``: the approval gate from the terminal.

``approve`` goes through the workflow's ``approve`` update, so an approval that does not
match the plan (a restated ``--model``, ``--parallel``... that differs) fails here, with the
reason, instead of being dropped silently. With no worker running, a run whose plan waits
for approval is approved by signal instead: the server keeps it and the run takes it when a
worker runs (``starter resume``), as it takes a rejection.
"""

from __future__ import annotations

import getpass
from typing import Any

import click
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.service import RPCError

from durabench.errors import ConfigError
from durabench.models.run import Approval, Rejection
from durabench.models.suite_run import ProgressOutput, RunOutcome
from runtime.client import connect
from starter.console import ANSWER_WITHIN, console, no_worker, shown
from starter.options import int_range, run_async, run_id_argument
from starter.route import no_worker_route
from workflows import SuiteRunWorkflow, run_workflow_id
from workflows.search_attributes import RUN_STATUS

__all__ = [
    "answering",
    "approve",
    "approve_main",
    "reject",
    "reject_main",
    "running_handle",
]


async def running_handle(
    client: Client, run_id: str, verb: str = "approved or rejected"
) -> WorkflowHandle[Any, RunOutcome]:
    """The handle of run ``run_id``.

    Raises:
        ConfigError: the run has ended, so it cannot be ``verb``.
    """
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    desc = await handle.describe()
    if desc.status != WorkflowExecutionStatus.RUNNING:
        state = desc.status.name.lower() if desc.status else "unknown"
        raise ConfigError(f"run {run_id} is {state}; only a running run can be {verb}")
    return handle


async def answering(handle: WorkflowHandle[Any, RunOutcome], run_id: str) -> ProgressOutput:
    """The run's progress, asked of its worker.

    An update or a query waits for a worker, silently and for as long as none runs: ask
    first, briefly, and say what to do.

    Raises:
        ConfigError: no worker answered within :data:`ANSWER_WITHIN`.
    """
    try:
        return await handle.query(SuiteRunWorkflow.progress, rpc_timeout=ANSWER_WITHIN)
    except RPCError as exc:
        raise ConfigError(no_worker(run_id)) from exc


async def approve_main(
    run_id: str,
    approver: str,
    note: str = "",
    client: Client | None = None,
    **restated: Any,
) -> Approval:
    """Approve through the ``approve`` update; ``restated`` parameters must match the plan.

    Raises:
        WorkflowUpdateFailedError: the run refused the approval; the cause says why.
    """
    client = client or await connect()
    handle = await running_handle(client, run_id)
    given = {k: v for k, v in restated.items() if v is not None}
    approval = Approval(approver=approver, note=note, **given)
    try:
        await answering(handle, run_id)
    except ConfigError:  # no worker: the run's status attribute, kept by Temporal, says
        return await _approve_waiting(handle, run_id, approval, restated=bool(given))
    taken = await handle.execute_update(SuiteRunWorkflow.approve_checked, approval)
    console.print(shown(f"Run {run_id} approved by {taken.approver} at {taken.approved_at}."))
    return taken


async def _approve_waiting(
    handle: WorkflowHandle[Any, RunOutcome], run_id: str, approval: Approval, *, restated: bool
) -> Approval:
    """Approve by signal a run that waits for approval while no worker runs.

    Raises:
        ConfigError: the plan is not made yet (an approval before it is ignored), or values
            are restated (only a worker can hold them against the plan); the message says
            what to do.
    """
    phase = (await handle.describe()).typed_search_attributes.get(RUN_STATUS)
    if phase != "awaiting_approval":
        raise ConfigError(f"no worker runs for run {run_id}: {no_worker_route(run_id, phase)}")
    if restated:
        raise ConfigError(
            f"no worker runs for run {run_id} to hold the restated values against its plan: "
            f"approve without them, or start `python -m starter resume {run_id}` and approve "
            "from another terminal"
        )
    await handle.signal(SuiteRunWorkflow.approve, approval)
    console.print(
        shown(
            f"Approval of run {run_id} by {approval.approver} sent; no worker runs, so it is "
            f"taken when a worker runs: run it here with `python -m starter resume {run_id}`."
        )
    )
    return approval


async def reject_main(run_id: str, reason: str, by: str, client: Client | None = None) -> None:
    """Send the ``reject`` signal: the run ends without starting anything.

    Raises:
        ConfigError: the run is approved (the signal would be ignored; cancel it instead),
            or no worker answers and the run's status does not say it awaits approval.
    """
    client = client or await connect()
    handle = await running_handle(client, run_id)
    try:
        progress = await answering(handle, run_id)
    except ConfigError:  # no worker: the run's status attribute, kept by Temporal, says
        if not await _awaits_approval(handle):
            raise
        progress = None
    if progress is not None and progress.approved_by is not None:
        raise ConfigError(
            f"run {run_id} is already approved (by {progress.approved_by} at "
            f"{progress.approved_at}), so a rejection cannot stop it; cancel it with "
            f"`python -m starter cancel {run_id}`"
        )
    await handle.signal(SuiteRunWorkflow.reject, Rejection(reason=reason, rejected_by=by))
    console.print(shown(f"Rejection of run {run_id} sent: {reason}"))
    if progress is None:
        console.print("No worker runs: the run ends, rejected, when one next does.")


async def _awaits_approval(handle: WorkflowHandle[Any, RunOutcome]) -> bool:
    """Whether the run's ``DurabenchRunStatus`` says it waits for its plan or approval."""
    status = (await handle.describe()).typed_search_attributes.get(RUN_STATUS)
    return status in ("planning", "awaiting_approval")


@click.command()
@run_id_argument
@click.option(
    "--approver",
    default=getpass.getuser,
    show_default="your user name",
    help="Who approves: kept in the report, the audit and run.json.",
)
@click.option(
    "--note",
    default="",
    help="Kept with the approval: status, the reports and the viewer show it beside who approved.",
)
@click.option("--model", default=None, help="Restate the model: refused if the plan differs.")
@click.option("--suite", default=None, help="Restate the suite or selection file.")
@click.option(
    "--config-mode",
    type=click.Choice(["paired", "baseline_only", "full_only"]),
    default=None,
    help="Restate the config mode.",
)
@click.option("--full-config", default=None, help="Restate the full (MCP) config.")
@click.option("--parallel", type=int_range(min=1), default=None, help="Restate the parallel slots.")
@click.option(
    "--category",
    type=click.Choice(["staging", "official"]),
    default=None,
    help="Restate the category.",
)
@click.option("--cost", default=None, help="Restate the expected cost (12.40-48.00, or unpriced).")
def approve(run_id: str, approver: str, note: str, **restated: Any) -> None:
    """Approve a run's plan so its pairs start.

    Restate any of the six parameters (model, suite, config mode, parallel, category, cost) to
    make sure you approve what you mean: a value that differs from the plan is refused.
    """
    run_async(approve_main)(run_id, approver, note, **restated)


@click.command()
@run_id_argument
@click.option("--reason", required=True, help="Why the run must not start.")
@click.option("--by", default=getpass.getuser, show_default="your user name", help="Who rejects.")
def reject(run_id: str, reason: str, by: str) -> None:
    """Reject a run's plan: it ends without starting anything."""
    run_async(reject_main)(run_id, reason, by)
