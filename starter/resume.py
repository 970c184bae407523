"""``python -m starter resume <run-id>``: make a run go again: unpause it, and work on it here.

A paused run gets the ``resume`` signal. Then, unless ``--detach``, a worker on this machine
carries the run until it ends, which is how a run whose worker died goes on. The run's
history is in Temporal (the embedded server keeps it in its SQLite file across restarts), so
a worker started here picks up exactly where the last one stopped: finished agent sessions
are not run again, running ones are re-attached.
"""

from __future__ import annotations

import getpass

import click
from temporalio.client import Client, WorkflowExecutionStatus

from durabench.errors import ConfigError
from durabench.models.run import Control
from durabench.models.suite_run import RunOutcome
from durabench.sandbox import docker_client
from durabench.settings.values import Settings
from runtime.client import connect
from runtime.temporal_profile import load_settings
from starter.console import console
from starter.options import run_async, run_id_argument
from starter.refusal import check_install
from starter.run import work_on
from workflows import SuiteRunWorkflow, run_workflow_id

__all__ = ["resume", "resume_main"]


async def resume_main(
    run_id: str,
    client: Client | None = None,
    settings: Settings | None = None,
    *,
    detach: bool = False,
    by: str = "unknown",
) -> RunOutcome | None:
    """Unpause the run if paused; unless ``detach``, work on it in-process until it ends.

    Raises:
        ConfigError: the run has ended (nothing to resume).
    """
    settings = settings or load_settings()
    if not detach and settings.sandbox == "docker":  # a Daytona worker needs no daemon
        docker_client().close()
    client = client or await connect(settings)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    desc = await handle.describe()
    if desc.status != WorkflowExecutionStatus.RUNNING:
        state = desc.status.name.lower() if desc.status else "unknown"
        raise ConfigError(
            f"run {run_id} is {state}: nothing to resume; see `python -m starter status {run_id}`"
        )
    await handle.signal(SuiteRunWorkflow.resume, Control(by=by))
    if detach:
        console.print(f"Run {run_id} resumed; its workers carry on.")
        return None
    console.print(f"Resuming run [bold]{run_id}[/] with a worker on this machine.")
    return await work_on(client, settings, handle)


@click.command()
@run_id_argument
@click.option("--detach", is_flag=True, help="Only unpause; leave the work to running workers.")
@click.option("--by", default=getpass.getuser, show_default="your user name", help="Who resumes.")
def resume(run_id: str, detach: bool, by: str) -> None:
    """Resume a run: unpause it and, unless --detach, run a worker here until it ends."""
    check_install()  # a worker runs here: its packages must be durabench's
    run_async(resume_main)(run_id, detach=detach, by=by)
