"""A cancelled attempt tears its container down only after its container phase ended.

A cancel used to resolve the running phase at once (TRY_CANCEL): the teardown ran while
``provision_sandbox`` was still making the container, found none, and the container
appeared after it. Container phases now wait for their cancellation to complete.
"""

from __future__ import annotations

import asyncio

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError

from starter.approve import approve_main
from tests.workflows.harness import Env, has_event, start_run, until
from tests.workflows.test_pair_arms import _events
from workflows import attempt_workflow_id

CLOSED = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
}


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_teardown_waits_for_a_cancelled_provision_to_undo_its_work(env: Env) -> None:
    rec = env.rec
    rec.gates["provision_sandbox/t1/baseline"] = asyncio.Event()  # never set: it runs on
    undo = rec.gates["undo_provision/t1/baseline"] = asyncio.Event()
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    attempt = env.client.get_workflow_handle(
        attempt_workflow_id(request.run_id, "t1", "baseline", 1)
    )
    await until(lambda: "provision_sandbox" in rec.calls, "provisioning starts")
    await handle.cancel()
    asked = EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED
    # The commands of the task that asked to cancel are in the history with the ask.
    await until(lambda: has_event(attempt, asked), "the attempt asked to cancel provisioning")
    undo.set()  # the provision's undo, held until then, ends
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    events = await _events(attempt)
    requested = next(i for i, e in enumerate(events) if e.event_type == asked)
    ended = next(i for i, e in enumerate(events[requested:]) if e.event_type in CLOSED)
    scheduled = EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    after = [i for i, e in enumerate(events[requested:]) if e.event_type == scheduled]
    assert after and min(after) > ended  # collect and teardown came after the undo
    assert "provision_undone" in rec.calls and not rec.live
