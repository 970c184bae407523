"""``python -m starter run``: plan, wait for approval, run every pair, print the results."""

from __future__ import annotations

import asyncio
import getpass
import os
import time
import uuid
from pathlib import Path
from typing import Literal

import click
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from durabench.errors import ConfigError
from durabench.ids import id_prefix
from durabench.logs import logs_to_file
from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import Approval, PlanSummary, RunRequest
from durabench.models.service import ServiceTarget
from durabench.models.suite_run import RunOutcome, SuiteRunInput
from durabench.planning.base_image import check_base_image
from durabench.planning.plan import UNPAIRED_ENV, check_request
from durabench.results.store import open_store
from durabench.settings.environment import pass_to_workers
from durabench.settings.values import Settings
from durabench.text_safety import visible_controls
from runtime.client import connect, deployment_of
from runtime.sweep import SWEEP_PERIOD_S, sweep_every
from runtime.temporal_profile import load_settings
from runtime.workers import run_workers, start_host, stopped
from starter.console import approval_hint, console, plan_table, result_tables, shown, ui_url
from starter.interrupted import left_behind
from starter.live import follow
from starter.options import allow_unknown_model, checked_run_id, run_async
from starter.same_run import check_same_request
from workflows import SuiteRunWorkflow, run_workflow_id
from workflows.run_details import plan_summary, request_details
from workflows.search_attributes import for_request

__all__ = ["NOTHING_MEASURED_EXIT", "main", "nothing_measured", "run"]

RunHandle = WorkflowHandle[SuiteRunWorkflow, RunOutcome]

NOTHING_MEASURED_EXIT = 3
"""Exit status of a run that completed with every pair excluded: nothing was measured
(1 is an error, 2 a usage error)."""


def new_run_id(source: str) -> str:
    """``<source>-<UTC timestamp>-<4 hex>``: sortable and unique, and always an id.

    ``source`` is the suite, or a selection or dataset file's name: any text.
    """
    prefix = id_prefix(source, "run")
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:4]}"


@click.command()
@click.option(
    "--suite",
    default="",
    help="Suite name (built-in: pytorch); with a selection, only tasks of that benchmark.",
)
@click.option(
    "--selection-file",
    "--selection",
    "selection",
    type=click.Path(dir_okay=False),
    default=None,
    help="CodeScaleBench selection file: run its tasks.",
)
@click.option(
    "--benchmarks-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="CodeScaleBench checkout: task dirs, and its configs/selected_benchmark_tasks.json.",
)
@click.option("--full-config", default="sourcegraph_full", show_default=True)
@click.option(
    "--baseline-only",
    "config_mode",
    flag_value="baseline_only",
    help="Gap-fill: only the baseline lane (each task needs an earlier full-lane counterpart).",
)
@click.option(
    "--full-only",
    "config_mode",
    flag_value="full_only",
    help="Gap-fill: only the full lane (each task needs an earlier baseline counterpart).",
)
@click.option(
    "--rerun",
    type=click.Choice(["failed", "infra", "all"]),
    default=None,
    help="Run these tasks of --from again, both lanes, as a new linked run.",
)
@click.option(
    "--from",
    "rerun_of",
    default=None,
    metavar="RUN_ID",
    callback=checked_run_id,
    help="The run to rerun.",
)
@click.option(
    "--agent",
    default="oracle",
    show_default=True,
    help="Agent adapter: claude-code, codex-cli, gemini-cli; oracle, nop, replay.",
)
@click.option("--model", default="none", show_default=True, help="Model the agent uses.")
@allow_unknown_model
@click.option(
    "--effort",
    default=None,
    metavar="LEVEL",
    help="Reasoning effort the agent CLI is given (claude-code, codex-cli): low, high, ...",
)
@click.option(
    "--parallel",
    default=None,
    type=click.IntRange(min=1),
    help="Pairs in flight at once [derived by the plan from the accounts, the sandboxes "
    "and the model's rate limits].",
)
@click.option("--category", type=click.Choice(["staging", "official"]), default="staging")
@click.option(
    "--agent-opt",
    "agent_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Agent option, repeatable (replay: plan=FILE; CLIs: version=V).",
)
@click.option(
    "--infra-retries",
    type=click.IntRange(min=0),
    default=None,
    help="New attempts per arm after an infra failure [DURABENCH_INFRA_RETRIES, 2].",
)
@click.option(
    "--infra-backoff",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds before the first infra retry, doubling [DURABENCH_INFRA_BACKOFF_SEC, 60].",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    metavar="TOKENS",
    help="Tokens one attempt may use (input, output, cache), enforced by the model gateway "
    "[DURABENCH_BUDGET_TOKENS, none].",
)
@click.option(
    "--approval-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds an unapproved run waits before it ends [DURABENCH_APPROVAL_TIMEOUT_SEC, 86400].",
)
@click.option(
    "--service-url",
    default=None,
    help="Grade through this benchmark service instead of the local verifier.",
)
@click.option("--service-api", type=click.Choice(["legacy", "v1"]), default="legacy")
@click.option(
    "--dataset-name",
    default=None,
    help="The service's dataset: sent with every request; alone, its text tasks are the run.",
)
@click.option(
    "--dataset-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Text tasks in a file ({dataset_name, tests: [{id, question}]}), graded by the service.",
)
@click.option("--payload-schema", default="", help="v1: the dataset's payload schema.")
@click.option(
    "--payload-type",
    type=click.Choice(["text", "artifact"]),
    default="text",
    show_default=True,
    help="v1: send the answer text, or upload a file of the attempt and grade its key.",
)
@click.option(
    "--response-file",
    default=None,
    help="File in the attempt directory holding the answer, or the artifact to upload "
    "(default: the final message; for an artifact, submission.patch).",
)
@click.option(
    "--service-scale",
    type=click.FloatRange(min=0, min_open=True),
    default=100.0,
    show_default=True,
    help="The value of a full pass when results do not say (their max_score): a reward is "
    "pass_percentage / scale, refused outside 0-1.",
)
@click.option(
    "--run-id",
    default=None,
    callback=checked_run_id,
    help="Run id (default: suite, time, random suffix).",
)
@click.option(
    "--sandbox",
    type=click.Choice(["docker", "daytona"]),
    default=None,
    help="Where attempts run (default: DURABENCH_SANDBOX, else docker); see docs/daytona.md.",
)
@click.option("--yes", is_flag=True, help="Approve the plan at once (for scripts).")
@click.option("--detach", is_flag=True, help="Start the run and leave it to `python worker.py`.")
@click.option(
    "--resume",
    is_flag=True,
    help="With --run-id of a running run: carry on with it even if its flags differ.",
)
def run(
    suite: str,
    selection: str | None,
    benchmarks_dir: str | None,
    full_config: str,
    config_mode: str | None,
    rerun: str | None,
    rerun_of: str | None,
    agent: str,
    model: str,
    effort: str | None,
    parallel: int | None,
    category: str,
    agent_opts: tuple[str, ...],
    infra_retries: int | None,
    infra_backoff: float | None,
    budget: int | None,
    approval_timeout: float | None,
    service_url: str | None,
    service_api: str,
    dataset_name: str | None,
    dataset_file: str | None,
    payload_schema: str,
    payload_type: Literal["text", "artifact"],
    response_file: str | None,
    service_scale: float,
    run_id: str | None,
    sandbox: str | None,
    yes: bool,
    detach: bool,
    resume: bool,
) -> None:
    """Plan a paired run of a suite, wait for approval, run it and report.

    Every task runs as a pair: baseline and the full config. --baseline-only / --full-only
    fill gaps next to earlier runs and are refused where a task has no counterpart
    (ALLOW_UNPAIRED_SINGLE_CONFIG=true bypasses, recorded in the plan).
    """
    if sandbox:  # this process's workers (and any it starts) read it as their setting
        pass_to_workers("DURABENCH_SANDBOX", sandbox)
    try:
        settings = load_settings()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if (rerun is None) != (rerun_of is None):
        raise click.UsageError("--rerun and --from go together: --rerun failed --from RUN_ID")
    from_service = bool(service_url and dataset_name)
    if not (suite or selection or benchmarks_dir or rerun_of or dataset_file or from_service):
        raise click.UsageError(
            "say what to run: --suite NAME, --selection-file FILE, --benchmarks-dir DIR, "
            "--rerun failed|infra|all --from RUN_ID, or with --service-url: --dataset-name "
            "NAME or --dataset-file FILE"
        )
    if dataset_file and not service_url:
        raise click.UsageError("--dataset-file tasks are graded by a service: add --service-url")
    named = selection or dataset_file
    source = suite or (Path(named).stem if named else None) or rerun_of or dataset_name or "run"
    service = None
    if service_url:
        try:
            service = ServiceTarget(
                url=service_url,
                api=service_api,
                dataset=dataset_name,
                payload_schema=payload_schema,
                payload_type=payload_type,
                response_file=response_file,
                scale=service_scale,
            )
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--service-url") from exc
    request = RunRequest(
        service=service,
        run_id=run_id or new_run_id(source),
        suite=suite,
        selection=str(Path(selection).resolve()) if selection else None,
        benchmarks_dir=str(Path(benchmarks_dir).resolve()) if benchmarks_dir else None,
        dataset_file=str(Path(dataset_file).resolve()) if dataset_file else None,
        full_config=full_config,
        config_mode=config_mode or "paired",
        rerun=rerun,
        rerun_of=rerun_of,
        allow_unpaired=os.environ.get(UNPAIRED_ENV, "").lower() == "true",
        parallel=parallel,
        category=category,
        agent=AgentSpec(
            name=agent,
            model=model,
            options=_parse_opts(agent_opts) | ({"effort": effort} if effort else {}),
        ),
        infra_retries=settings.infra_retries if infra_retries is None else infra_retries,
        infra_backoff_sec=settings.infra_backoff_sec if infra_backoff is None else infra_backoff,
        approval_timeout_sec=approval_timeout or settings.approval_timeout_sec,
        budget_tokens=settings.gateway_budget_tokens if budget is None else budget,
    )
    outcome = run_async(main)(request, yes=yes, detach=detach, resume=resume)
    if outcome is not None and outcome.status != "completed":
        raise click.ClickException(
            visible_controls(f"run {request.run_id} {outcome.status}: {outcome.reason}")
        )
    said = nothing_measured(outcome)
    if said is not None:
        click.echo(f"Error: {said}", err=True)
        raise click.exceptions.Exit(NOTHING_MEASURED_EXIT)


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


def _parse_opts(pairs: tuple[str, ...]) -> dict[str, str]:
    opts = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--agent-opt")
        opts[key] = value
    return opts


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
    if not detach:  # the in-process worker builds from the base image: here, or refused now
        check_base_image(settings.base_image)
    client = client or await connect(settings)
    handle, resumed = await _start(client, settings, request, resume)
    verb = "exists and runs: resuming it here" if resumed else "started"
    console.print(
        f"Run [bold]{request.run_id}[/] {verb}; Web UI: {ui_url(settings, request.run_id)}"
    )
    if detach:
        if yes and not resumed:
            console.print("Approved with --yes: the run starts once its plan is made.")
        else:  # a run that ran already keeps its own request: approve it as usual
            _print_approval_hint(settings, request.run_id)
        console.print("Detached: workers started with `python worker.py` carry the run.")
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
        sweep = sweep_every(client, settings.host_id, SWEEP_PERIOD_S, stop, remote)
        sweeper = asyncio.create_task(sweep)
        try:
            return await _follow(client, handle, settings, yes=yes)
        finally:
            stop.set()
            await stopped(workers, sweeper)


async def _start(
    client: Client, settings: Settings, request: RunRequest, resume: bool
) -> tuple[RunHandle, bool]:
    """Start the run; a run of that id that still runs is resumed (``True``), never redone.

    It is resumed if it was asked for with the same flags, or with ``resume`` as it is.
    """
    try:
        handle = await client.start_workflow(
            SuiteRunWorkflow.run,
            SuiteRunInput(request=request),
            id=run_workflow_id(request.run_id),
            task_queue=settings.task_queue,
            search_attributes=for_request(request),
            static_summary=plan_summary(request),
            static_details=request_details(request),
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
