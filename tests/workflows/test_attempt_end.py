"""An attempt ends in one activity and a local one: finish the sandbox, record the result.

Collecting, removing the container and classifying always run back to back, so they are
one activity, ``finish_sandbox``: one workflow task and one activity per attempt's end,
not three. The collect keeps its phase timing in ``result.json`` and the removal happens
for every attempt. ``record_attempt`` touches no container: it runs as a local activity,
in the workflow task that gets the finish's result.
"""

from __future__ import annotations

import json

import pytest
from temporalio.api.enums.v1 import EventType

from starter.approve import approve_main
from tests.workflows.harness import Env, start_run
from workflows import attempt_workflow_id


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_an_attempt_ends_in_one_activity_then_records_locally(env: Env) -> None:
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    assert (await handle.result()).status == "completed"

    wf = attempt_workflow_id(request.run_id, "t1", "baseline", 1)
    history = await env.client.get_workflow_handle(wf).fetch_history()
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert scheduled[-1] == "finish_sandbox"
    assert "teardown_sandbox" not in scheduled  # the finish removes the container
    # The finish classifies too, from the logs it collects: no activity of its own.
    assert env.rec.calls.count("classify") == 2  # once per attempt, in the finish
    # The result is recorded by a local activity: a marker, not an activity of its own.
    assert "record_attempt" not in scheduled
    local = [
        json.loads(e.marker_recorded_event_attributes.details["data"].payloads[0].data)
        for e in history.events
        if e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    assert [m["activity_type"] for m in local] == ["record_attempt"]
    assert len(env.rec.attempts) == 2

    assert sorted(env.rec.torn_down) == [("t1", "baseline"), ("t1", "sourcegraph_full")]
    assert env.rec.calls.count("collect") == 2
    for attempt in env.rec.attempts:  # the collect's phase is still timed in result.json
        phases = [t.phase for t in attempt.timings]
        assert phases[-1] == "collect_artifacts", phases
