"""``python -m starter run``: plan, wait for approval, run every pair, print the results."""

from __future__ import annotations

import asyncio
import getpass
import os
from pathlib import Path
from typing import Any

import click
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from durabench.errors import ConfigError, DurabenchError
from durabench.logs import logs_to_file
from durabench.models.results import RunResult
from durabench.models.run import Approval, PlanSummary, RunRequest
from durabench.models.suite_run import RunOutcome, SuiteRunInput
from durabench.planning.base_image import check_base_image
from durabench.planning.plan import UNPAIRED_ENV, check_request, make_plan
from durabench.results.store import open_store
from durabench.settings.environment import pass_to_workers
from durabench.settings.sources import CONFIG_FILE
from durabench.settings.values import Settings
from runtime.client import connect, deployment_of
from runtime.spend_broker import host_upkeep
from runtime.temporal_profile import load_settings
from runtime.workers import run_workers, start_host, stopped
from starter.console import approval_hint, console, plan_table, result_tables, shown, ui_url
from starter.interrupted import left_behind
from starter.live import follow
from starter.options import run_async
from starter.refusal import Refusal, check_install, plain
from starter.run_config import dump_request, load_request, refuse_flags_beside_config
from starter.run_options import (
    agent_options,
    config_options,
    policy_options,
    service_options,
    source_options,
    start_options,
)
from starter.run_request import RunOptions, build_request, run_stamp
from starter.same_run import check_same_request
from workflows import SuiteRunWorkflow, run_workflow_id
from workflows.run_details import request_details, start_story, start_summary
from workflows.search_attributes import for_request

__all__ = ["NOTHING_MEASURED_EXIT", "main", "nothing_measured", "preview_plan", "run", "start"]

RunHandle = WorkflowHandle[SuiteRunWorkflow, RunOutcome]

NOTHING_MEASURED_EXIT = 3
"""Exit status of a run that completed with every pair excluded: nothing was measured
(1 is an error, 2 a usage error)."""
SPEND_CAP_EXIT = 3
"""Exit status of a run that ended cleanly at its spend cap, with pairs not run."""


@click.command()
@config_options
@source_options
@agent_options
@policy_options
@service_options
@start_options
def run(
    yes: bool,
    detach: bool,
    resume: bool,
    sandbox: str | None,
    config_file: Path | None,
    print_config: bool,
    **options: Any,
) -> None:
    """Plan a paired run of a suite, wait for approval, run it and report.

    Every task runs as a pair: baseline and the full config. --baseline-only / --full-only
    fill gaps next to earlier runs and are refused where a task has no counterpart
    (ALLOW_UNPAIRED_SINGLE_CONFIG=true bypasses, recorded in the plan).
    """
    if sandbox:  # this process's workers (and any it starts) read it as their setting
        pass_to_workers("DURABENCH_SANDBOX", sandbox)
    check_install()  # this process may run a worker: its packages must be durabench's
    try:
        settings = load_settings()
    except ConfigError as exc:
        raise Refusal(str(exc)) from exc
    stamp = run_stamp()
    unpaired = os.environ.get(UNPAIRED_ENV, "").lower() == "true"
    if config_file is not None:
        given = [name for name in options if name != "run_id"]
        refuse_flags_beside_config(click.get_current_context(), given)
        request = load_request(
            config_file, settings, allow_unpaired=unpaired, stamp=stamp, run_id=options["run_id"]
        )
    else:
        request = build_request(
            RunOptions(**options), settings, allow_unpaired=unpaired, stamp=stamp
        )
    if print_config:  # a generated id is left out: the file makes a new run each time
        named = not request.run_id.endswith(stamp)
        click.echo(dump_request(request, with_run_id=named), nl=False)
        return
    outcome = run_async(main)(request, yes=yes, detach=detach, resume=resume)
    if outcome is not None and outcome.status != "completed":
        raise Refusal(f"run {request.run_id} {outcome.status}: {outcome.reason}")
    if outcome is not None and outcome.not_run:  # the cap was reached: a clean end, and a hint
        click.echo(f"Error: {plain(spend_cap_reached(outcome))}", err=True)
        raise click.exceptions.Exit(SPEND_CAP_EXIT)
    said = nothing_measured(outcome)
    if said is not None:
        click.echo(f"Error: {plain(said)}", err=True)
        raise click.exceptions.Exit(NOTHING_MEASURED_EXIT)


def spend_cap_reached(outcome: RunOutcome) -> str:
    """What the terminal says when the spend cap left pairs unstarted."""
    return (
        f"the spend cap was reached: {outcome.not_run} pair(s) not run or cut short (listed in "
        f"{outcome.report_path}); to run them with a higher cap: {outcome.continue_command}"
    )


def nothing_measured(outcome: RunOutcome | None) -> str | None:
    """Why a completed run measured nothing (every pair excluded), or ``None``."""
    if outcome is None or outcome.status != "completed" or not outcome.results_dir:
        return None
    results = Path(outcome.results_dir) / "results.json"
    if not results.exists():
        return None
    result = RunResult.model_validate_json(results.read_text())
    tasks = {t.task_id for t in result.plan.tasks}
    if not tasks or not tasks <= set(result.excluded):
        return None
    return (
        f"Nothing was measured: all {len(tasks)} pair(s) of run {outcome.run_id} were "
        f"excluded for infrastructure reasons; the report says why "
        f"({outcome.report_path or results.parent}). Rerun them with "
        f"`python -m starter run --rerun infra --from {outcome.run_id}`."
    )


async def main(
    request: RunRequest,
    *,
    yes: bool = False,
    detach: bool = False,
    resume: bool = False,
    client: Client | None = None,
    settings: Settings | None = None,
) -> RunOutcome | None:
    """Start the run; unless ``detach``, work on it in-process until it ends.

    ``resume``: a running run of the same id carries on even if its flags differ. With
    ``yes`` the approval goes with the request: the run takes it once its plan is made,
    whether or not this process is still there.
    """
    settings = settings or load_settings()
    check_request(request, settings, here=not detach)  # a typo: refused before any run
    open_store(settings).check()  # where results go: reachable, or refused with the fix
    if yes:
        request = request.model_copy(update={"approved_by": f"{getpass.getuser()} (--yes)"})
    if not detach and settings.sandbox == "docker":  # its worker builds from the base image
        check_base_image(settings.base_image, settings.home / CONFIG_FILE)  # here, or refused now
    client = client or await connect(settings)
    plan = None if detach else await asyncio.to_thread(preview_plan, request, settings)
    handle, resumed = await start(client, settings, request, resume=resume, plan=plan)
    verb = "exists and runs: resuming it here" if resumed else "started"
    console.print(
        f"Run [bold]{request.run_id}[/] {verb}; Web UI: {ui_url(settings, request.run_id)}"
    )
    if detach:
        if yes and not resumed:
            console.print("Approved with --yes: the run starts once its plan is made.")
        else:  # a run that ran already keeps its own request: approve it as usual
            _print_approval_hint(settings, request.run_id)
        read = (
            f"; read its plan with `python -m starter status {request.run_id}` before you approve"
        )
        console.print(
            "Detached: the run is planned once a worker runs (`python -m starter worker`, "
            f"with this home, server and base image){'' if yes else read}."
        )
        return None
    try:
        return await work_on(client, settings, handle, yes=yes)
    except asyncio.CancelledError:  # Ctrl-C: the run stays; say how to end it
        raise await left_behind(handle, request.run_id) from None


async def work_on(
    client: Client, settings: Settings, handle: RunHandle, *, yes: bool = False
) -> RunOutcome:
    """Run this machine's workers for the run and show it until it ends.

    The workers' log goes to a file: their tracebacks would break up the live view.
    """
    log_file = settings.home / "logs" / f"{handle.id.rpartition('/')[2]}.log"
    console.print(f"Worker log: {shown(str(log_file))}")
    stop = asyncio.Event()
    with logs_to_file(log_file):
        deployment = await deployment_of(client)
        built = await start_host(client, settings, deployment)
        workers = asyncio.create_task(run_workers(built, stop))
        # As python worker.py does: leftovers of this host (a crash, a cancel) are removed.
        remote = deployment if settings.sandbox == "daytona" else None
        sweeper = asyncio.create_task(host_upkeep(client, settings, stop, remote))
        try:
            return await _follow(client, handle, settings, yes=yes)
        finally:
            stop.set()
            await stopped(workers, sweeper)


def preview_plan(request: RunRequest, settings: Settings) -> PlanSummary | None:
    """The run's plan as this machine makes it, for the Web UI's first page; or ``None``.

    The plan the run waits on is made again by its worker (here, the same machine); this
    one only says up front what the run will do and cost. ``None`` when it cannot be made
    here: the tasks come from a service, or the request is refused (the worker says why).
    """
    if request.tasks_from_service:
        return None
    try:
        return make_plan(request, settings).summary()
    except DurabenchError:
        return None


async def start(
    client: Client,
    settings: Settings,
    request: RunRequest,
    *,
    resume: bool = False,
    plan: PlanSummary | None = None,
) -> tuple[RunHandle, bool]:
    """Start the run; a run of that id that still runs is resumed (``True``), never redone.

    It is resumed if it was asked for with the same flags, or with ``resume`` as it is.
    ``plan`` (:func:`preview_plan`) puts what the run will do and cost in what the Web UI
    shows first: the input's ``about`` lines, the static summary and details.
    """
    try:
        handle = await client.start_workflow(
            SuiteRunWorkflow.run,
            SuiteRunInput(about=start_story(request, plan), request=request),
            id=run_workflow_id(request.run_id),
            task_queue=settings.task_queue,
            search_attributes=for_request(request),
            static_summary=start_summary(request, plan),
            static_details=request_details(request, plan),
            # A run id names one run forever: never start a finished run again.
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )
        return handle, False
    except WorkflowAlreadyStartedError:
        handle = client.get_workflow_handle_for(
            SuiteRunWorkflow.run, run_workflow_id(request.run_id)
        )
        desc = await handle.describe()
        if desc.status == WorkflowExecutionStatus.RUNNING:
            if not resume:
                await check_same_request(client, handle, request)
            return handle, True
        raise ConfigError(
            f"run {request.run_id} already exists and has ended; see it with "
            f"`python -m starter status {request.run_id}` or choose another --run-id"
        ) from None


def _print_approval_hint(settings: Settings, run_id: str) -> None:
    console.print(approval_hint(settings, run_id), markup=False)


async def _wait_for_plan(handle: RunHandle) -> PlanSummary:
    """Poll the ``plan`` query; surface the run's failure if planning failed."""
    while True:
        desc = await handle.describe()
        if desc.status != WorkflowExecutionStatus.RUNNING:
            await handle.result()
            raise ConfigError(f"run {handle.id} ended before its plan was made")
        try:
            plan = await handle.query(SuiteRunWorkflow.plan)
        except RPCError:
            plan = None
        if plan is not None:
            return plan
        await asyncio.sleep(0.3)


async def _follow(
    client: Client, handle: RunHandle, settings: Settings, *, yes: bool
) -> RunOutcome:
    plan = await _wait_for_plan(handle)
    console.print(plan_table(plan))
    approved = (await handle.query(SuiteRunWorkflow.progress)).approved_by
    if approved:
        console.print(f"Approved by {shown(approved)}.")
    elif yes:
        await handle.execute_update(
            SuiteRunWorkflow.approve_checked, Approval(approver=f"{getpass.getuser()} (--yes)")
        )
        console.print("Approved with --yes.")
    else:
        _print_approval_hint(settings, plan.request.run_id)
    outcome = await follow(client, handle)
    if outcome.status == "completed":
        results = Path(outcome.results_dir) / "results.json"
        if results.exists():
            for table in result_tables(RunResult.model_validate_json(results.read_text())):
                console.print(table)
        where = f"[bold]{shown(outcome.results_dir)}[/] (report: {shown(outcome.report_path)})"
        console.print(f"Results: {where}")
    return outcome
