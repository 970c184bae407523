"""``python -m starter pause|set-parallel|cancel <run-id>``: steer a run while it runs.

Each is a thin call to a workflow handler, so the same control is at hand in the Web UI and
the ``temporal`` CLI: the ``pause``/``resume`` signals, the ``set_parallel`` update (its
validator refuses a value below 1), and Temporal's own cancellation. ``resume`` lives in
``starter/resume.py``: it also restarts a worker for a run whose worker died.
"""

from __future__ import annotations

import getpass

import click
from temporalio.client import Client, WorkflowFailureError

from durabench.models.run import Control
from runtime.client import connect
from starter.approve import answering, running_handle
from starter.console import console
from starter.options import int_range, run_async, run_id_argument
from workflows import SuiteRunWorkflow

__all__ = ["cancel", "cancel_main", "pause", "pause_main", "set_parallel", "set_parallel_main"]


async def pause_main(run_id: str, by: str, reason: str = "", client: Client | None = None) -> None:
    """Send ``pause``: no new pair or attempt starts; running attempts finish."""
    client = client or await connect()
    handle = await running_handle(client, run_id, "paused")
    await handle.signal(SuiteRunWorkflow.pause, Control(by=by, reason=reason))
    console.print(
        f"Run {run_id} paused: running attempts finish, nothing new starts. "
        f"Go on with `python -m starter resume {run_id}`."
    )


async def set_parallel_main(run_id: str, parallel: int, client: Client | None = None) -> int:
    """Change the run's parallel slots through the ``set_parallel`` update; the old value.

    Changed while the plan is still being made, the old value is 0 (the plan had not
    derived one yet), and the new one stands: the plan does not replace it.
    """
    client = client or await connect()
    handle = await running_handle(client, run_id, "changed")
    await answering(handle, run_id)  # an update waits silently for a worker
    previous = await handle.execute_update(SuiteRunWorkflow.set_parallel, parallel)
    was = str(previous) if previous else "(not planned yet)"
    console.print(f"Run {run_id}: parallel slots {was} → {parallel}.")
    return previous


async def cancel_main(run_id: str, *, wait: bool = True, client: Client | None = None) -> None:
    """Cancel the run: pairs in flight are cancelled and their containers removed.

    Results of finished attempts stay on disk. With ``wait``, returns once the run has
    ended, that is once every pair reported its containers gone.
    """
    client = client or await connect()
    handle = await running_handle(client, run_id, "cancelled")
    await handle.cancel()
    if not wait:
        console.print(f"Cancellation of run {run_id} requested.")
        return
    console.print(f"Cancelling run {run_id}: waiting for its containers to be removed...")
    try:
        await handle.result()
    except WorkflowFailureError:
        pass  # cancelled: the expected end
    console.print(f"Run {run_id} cancelled; finished attempts are kept in its results.")


@click.command()
@run_id_argument
@click.option("--by", default=getpass.getuser, show_default="your user name", help="Who pauses.")
@click.option("--reason", default="", help="Kept in the run's log.")
def pause(run_id: str, by: str, reason: str) -> None:
    """Pause a run: nothing new starts, running attempts finish."""
    run_async(pause_main)(run_id, by, reason)


@click.command(name="set-parallel")
@run_id_argument
@click.argument("parallel", type=int_range(min=1))
def set_parallel(run_id: str, parallel: int) -> None:
    """Change how many pairs of a run are in flight at once."""
    run_async(set_parallel_main)(run_id, parallel)


@click.command()
@run_id_argument
@click.option("--no-wait", is_flag=True, help="Return once the cancellation is requested.")
def cancel(run_id: str, no_wait: bool) -> None:
    """Cancel a run: its containers are removed, finished results kept."""
    run_async(cancel_main)(run_id, wait=not no_wait)
