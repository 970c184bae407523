"""An attempt's history holds one activity per step of its container, and no more.

Every activity costs the worker and the server a workflow task and three events, so the
count is part of what an attempt costs (docs/overhead.md). Counts are not timings: they
do not depend on the machine's load, and a change that adds a round trip shows here.
"""

from __future__ import annotations

from collections import Counter

import pytest
from temporalio.api.enums.v1 import EventType

from tests.workflows.harness import Env, approved_attempt, scheduled


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_an_attempt_is_five_activities_and_a_local_one(env: Env) -> None:
    events = await approved_attempt(env)
    # The image is built (or found) by the provision: no activity of its own.
    assert scheduled(events) == [
        "claim_host",
        "provision_sandbox",
        "run_agent",
        "verify",
        "finish_sandbox",
    ]
    kinds = Counter(e.event_type for e in events)
    assert kinds[EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED] == 6
    assert len(events) == 37
    for attempt in env.rec.attempts:  # the image and the start are still timed apart
        phases = [t.phase for t in attempt.timings]
        assert phases[:2] == ["prepare_image", "provision_sandbox"], phases
        image, start = attempt.timings[:2]
        assert image.started_at <= image.finished_at == start.started_at <= start.finished_at
