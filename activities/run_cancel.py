"""Right before an agent session launches, the run's own cancel is asked for.

A run's cancel travels run -> pair -> attempt -> agent phase, a workflow task at each hop
and a heartbeat's answer at the end: an agent phase that began just before it could
launch a paid session a few hundred milliseconds after the run's cancel was recorded.
So the launch asks the server first whether the attempt's root workflow (the run) has a
cancel recorded, or has ended; if so it launches nothing and waits, heartbeating, for its
own cancel to arrive (the chain's last hop), which ends the phase as cancelled.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity
from temporalio.client import WorkflowExecutionStatus
from temporalio.exceptions import ApplicationError

from durabench.logs import get_logger

__all__ = ["RUN_CANCELLED", "unless_run_cancelled"]

log = get_logger("durabench.worker")

RUN_CANCELLED = "RunCancelled"
"""Type of the failure of an agent phase whose run was cancelled and whose own cancel never
came (not retried: no session was launched)."""
OWN_CANCEL_WAIT = timedelta(minutes=2)
"""How long the phase waits for its own cancel once it saw the run's."""
_BEAT_S = 0.5


async def unless_run_cancelled() -> None:
    """Return if the attempt's run goes on; else launch nothing and end cancelled.

    Raises:
        asyncio.CancelledError: the attempt's own cancel arrived (the usual end).
        ApplicationError: ``RunCancelled``, when its own cancel did not come in time.
    """
    if not await _run_cancelled():
        return
    info = activity.info()
    log.info("the run is cancelled: no session launches", workflow=info.workflow_id)
    waited = 0.0
    while waited < OWN_CANCEL_WAIT.total_seconds():
        activity.heartbeat("the run is cancelled: waiting for this attempt's cancel")
        await asyncio.sleep(_BEAT_S)
        waited += _BEAT_S
    raise ApplicationError(
        f"the run of {info.workflow_id} was cancelled: no agent session was launched",
        type=RUN_CANCELLED,
        non_retryable=True,
    )


async def _run_cancelled() -> bool:
    """Whether the root workflow of this activity's workflow has a cancel or has ended."""
    info = activity.info()
    if info.workflow_id is None:  # not run by a workflow
        return False
    try:
        client = activity.client()
    except RuntimeError:  # a test's activity environment without a server: no run to ask
        return False
    own = await client.get_workflow_handle(info.workflow_id, run_id=info.workflow_run_id).describe()
    root = own.raw_description.workflow_execution_info.root_execution.workflow_id
    if not root or root == info.workflow_id:  # an attempt started on its own
        return False
    run = await client.get_workflow_handle(root).describe()  # its latest run, by id
    extended = run.raw_description.workflow_extended_info
    return run.status != WorkflowExecutionStatus.RUNNING or extended.cancel_requested
