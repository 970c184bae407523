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

from tests.workflows.harness import Env, approved_attempt, scheduled


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_an_attempt_ends_in_one_activity_then_records_locally(env: Env) -> None:
    history = await approved_attempt(env)
    names = scheduled(history)
    assert names[-1] == "finish_sandbox"
    assert "teardown_sandbox" not in names  # the finish removes the container
    # The finish classifies too, from the logs it collects: no activity of its own.
    assert env.rec.calls.count("classify") == 2  # once per attempt, in the finish
    # The result is recorded by a local activity: a marker, not an activity of its own.
    assert "record_attempt" not in names
    local = [
        json.loads(e.marker_recorded_event_attributes.details["data"].payloads[0].data)
        for e in history
        if e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    assert [m["activity_type"] for m in local] == ["record_attempt"]
    assert len(env.rec.attempts) == 2

    assert sorted(env.rec.torn_down) == [("t1", "baseline"), ("t1", "sourcegraph_full")]
    assert env.rec.calls.count("collect") == 2
    for attempt in env.rec.attempts:  # the collect's phase is still timed in result.json
        phases = [t.phase for t in attempt.timings]
        assert phases[-1] == "collect_artifacts", phases
