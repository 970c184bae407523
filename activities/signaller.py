"""Who sent a signal: the identity the server recorded with it in the workflow's history.

A workflow's signal handler sees the signal's input, never its sender; the server keeps
the client's identity (``--identity`` of the ``temporal`` CLI, the Web UI's user) on the
``WorkflowExecutionSignaled`` event. An activity can read it there once the workflow has
taken the signal.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

__all__ = ["signal_identity"]

_SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED


async def signal_identity(
    client: Client, workflow_id: str, run_id: str, name: str, number: int
) -> str:
    """The identity of the ``number``-th signal ``name`` (from 1) of that workflow run.

    Returns an empty string when the run has no such signal or the sender gave none.
    """
    seen = 0
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    async for event in handle.fetch_history_events():
        if event.event_type != _SIGNALED:
            continue
        signaled = event.workflow_execution_signaled_event_attributes
        if signaled.signal_name == name:
            seen += 1
            if seen == number:
                return signaled.identity
    return ""
