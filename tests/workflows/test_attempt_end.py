"""An attempt ends in one activity: ``finish_sandbox`` collects the logs, then removes the box.

``collect_artifacts`` and ``teardown_sandbox`` always ran back to back, each a workflow
task and an activity of its own (12 history events per attempt). Merged (issue 22), the
collect keeps its phase timing in ``result.json`` and the removal still happens for every
attempt. Histories from before the merge replay their two activities (``test_replay``).
"""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType

from starter.approve import approve_main
from tests.workflows.harness import Env, start_run
from workflows import attempt_workflow_id


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_an_attempt_ends_in_one_activity_that_collects_then_removes(env: Env) -> None:
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
    assert scheduled[-2:] == ["finish_sandbox", "record_attempt"]
    assert "collect_artifacts" not in scheduled and "teardown_sandbox" not in scheduled

    assert sorted(env.rec.torn_down) == [("t1", "baseline"), ("t1", "sourcegraph_full")]
    assert env.rec.calls.count("collect_artifacts") == 2
    for attempt in env.rec.attempts:  # the collect's phase is still timed in result.json
        phases = [t.phase for t in attempt.timings]
        assert phases[-1] == "collect_artifacts", phases
