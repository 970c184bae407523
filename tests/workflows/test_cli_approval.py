"""Approval from the terminal, as a person meets it: ``python -m starter`` in a subprocess.

The worker of the test plans for real (the real plan activities on disk; the sandbox is
faked), and runs in this event loop while the CLI runs beside it.
"""

from __future__ import annotations

import asyncio
import getpass
import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from activities import PlanActivities
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from starter.approve import approve_main
from starter.control import pause_main
from starter.run import main as run_main
from tests.starter_cli import one_error, starter_async
from tests.workflows.harness import Disk
from workflows import WORKFLOWS, SuiteRunWorkflow, run_workflow_id


async def _planned(disk: Disk) -> str:
    """A run of the bundled suite, planned and awaiting approval; its id."""
    request = RunRequest(run_id=f"r-{uuid.uuid4().hex[:6]}", suite="pytorch")
    await run_main(request, detach=True, client=disk.client, settings=disk.settings)
    handle = disk.client.get_workflow_handle_for(
        SuiteRunWorkflow.run, run_workflow_id(request.run_id)
    )
    while await handle.query(SuiteRunWorkflow.plan) is None:
        await asyncio.sleep(0.1)
    return request.run_id


async def test_status_of_a_run_awaiting_approval_shows_its_plan(disk: Disk) -> None:
    run_id = await _planned(disk)
    proc = await starter_async(disk.settings, "status", run_id)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"Plan of run {run_id}" in out
    assert "tensor-broadcast-001" not in out  # the plan's parameters, not its task list
    for row in ("model", "config mode", "parallel slots", "agent-hours", "containers"):
        assert row in out
    assert f"python -m starter approve {run_id}" in out


async def test_reject_after_approval_is_refused_and_points_to_cancel(disk: Disk) -> None:
    run_id = await _planned(disk)
    await pause_main(run_id, "ann", client=disk.client)  # approved, it still runs: no pair starts
    await approve_main(run_id, "ann", client=disk.client)
    proc = await starter_async(disk.settings, "reject", run_id, "--reason", "too late")
    error = one_error(proc)
    assert f"run {run_id} is already approved (by ann" in error
    assert f"python -m starter cancel {run_id}" in error


async def test_approve_without_a_worker_says_to_start_one(settings: Settings) -> None:
    """No worker polls the run's queue: each update ends with the hint instead of hanging."""
    request = RunRequest(run_id=f"r-{uuid.uuid4().hex[:6]}", suite="pytorch")
    await run_main(request, detach=True, settings=settings)
    proc = await starter_async(settings, "set-parallel", request.run_id, "3", timeout=60)
    error = one_error(proc)
    assert f"no worker answers for run {request.run_id}" in error
    assert "start one with `python worker.py`" in error
    # Not planned yet (an approval before the plan is ignored): the route that plans it.
    error = one_error(await starter_async(settings, "approve", request.run_id, timeout=60))
    assert f"no worker runs for run {request.run_id}: run it here with " in error
    assert f"`python -m starter resume {request.run_id}`: it makes the plan" in error
    # A rejection needs no answer: the run's status says it is not approved.
    proc = await starter_async(settings, "reject", request.run_id, "--reason", "no", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "the run ends, rejected, when one next does" in proc.stdout


async def test_a_reused_run_id_with_other_flags_is_refused(disk: Disk) -> None:
    run_id = f"r-{uuid.uuid4().hex[:6]}"
    flags = ("run", "--suite", "pytorch", "--run-id", run_id, "--detach")
    first = await starter_async(disk.settings, *flags)
    assert first.returncode == 0, first.stderr
    again = await starter_async(disk.settings, *flags)
    assert again.returncode == 0, again.stderr
    assert f"Run {run_id} exists and runs: resuming it here" in again.stdout

    other = await starter_async(disk.settings, *flags, "--parallel", "3")
    error = one_error(other)
    assert f"run {run_id} already runs with other flags: parallel derived there, 3 here" in error
    assert "--resume" in error
    resumed = await starter_async(disk.settings, *flags, "--parallel", "3", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"Run {run_id} exists and runs: resuming it here" in resumed.stdout


async def test_the_plan_shows_the_containers_a_host_admits(
    client: Client, settings: Settings
) -> None:
    """``--parallel 4`` asks for 8 containers at once; a host of one sandbox gives one."""
    small = settings.model_copy(update={"max_sandboxes": 1, "host_id_override": "small-host"})
    async with Worker(
        client,
        task_queue=settings.task_queue,
        workflows=list(WORKFLOWS),
        activities=[PlanActivities(small).plan_run],
    ):
        request = RunRequest(run_id=f"r-{uuid.uuid4().hex[:6]}", suite="pytorch", parallel=4)
        await run_main(request, detach=True, client=client, settings=settings)
        handle = client.get_workflow_handle_for(
            SuiteRunWorkflow.run, run_workflow_id(request.run_id)
        )
        while await handle.query(SuiteRunWorkflow.plan) is None:
            await asyncio.sleep(0.1)
        proc = await starter_async(settings, "status", request.run_id)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())  # the plan table wraps long values
    assert "8, at most 1 at once (host small-host admits 1: DURABENCH_MAX_SANDBOXES" in out
    assert "by memory as measured" in out


async def test_hints_work_as_printed_on_any_server(settings: Settings) -> None:
    """Another server than the default: the signal command names it; the link, the UI."""
    run_id = f"r-{uuid.uuid4().hex[:6]}"
    flags = ("run", "--suite", "pytorch", "--run-id", run_id, "--detach")
    ui = "https://temporal-ui.example:8443"
    proc = await starter_async(settings, *flags, DURABENCH_UI_URL=ui + "/")
    assert proc.returncode == 0, proc.stderr
    signal = (
        f"temporal workflow signal --address {settings.temporal_address} "
        f"--workflow-id run/{run_id} --name approve "
        f'--input \'{{"approver": "{getpass.getuser()}"}}\''  # a name: the approver is recorded
    )
    assert any(signal in line for line in proc.stdout.splitlines()), proc.stdout
    assert f"{ui}/namespaces/default/workflows/run%2F{run_id}" in proc.stdout
    assert f"Web UI of {settings.temporal_address}" not in proc.stdout

    unknown = await starter_async(settings, "status", run_id)
    assert f"Web UI of {settings.temporal_address}" not in unknown.stdout
    assert "DURABENCH_UI_URL" in unknown.stdout
