"""DURABENCH_SANDBOX_QUOTA on Docker: never more attempts holding a sandbox than the quota.

Each attempt holds its slot from its claim to its sandbox's removal, so the intervals
from its provision's start to its finish's end, read from the results, overlap at most
quota times; 4 pairs asked for, 8 attempts could.
"""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from tests.integration.runs import finished_run

pytestmark = pytest.mark.docker


def most_sandboxes_at_once(result: RunResult) -> int:
    """The most attempts whose sandbox phases (provision to finish) overlapped."""
    edges: list[tuple[float, int]] = []
    for attempt in result.attempts:
        starts = [t.started_at.timestamp() for t in attempt.timings]
        ends = [t.finished_at.timestamp() for t in attempt.timings]
        edges += [(min(starts), 1), (max(ends), -1)]
    running = peak = 0
    for _, step in sorted(edges, key=lambda e: (e[0], e[1])):  # an end before a start
        running += step
        peak = max(peak, running)
    return peak


async def test_quota_bounds_sandboxes_at_once_on_docker(client: Client, settings: Settings) -> None:
    request = RunRequest(
        run_id=f"it-{uuid.uuid4().hex[:8]}",
        suite="pytorch",
        agent=AgentSpec(name="oracle"),
        parallel=4,
    )
    quota = settings.model_copy(update={"sandbox_quota": 2})
    _, result = await finished_run(request, client, quota)
    assert {(a.exit_class, a.reward) for a in result.attempts} == {("completed", 1.0)}
    assert len(result.attempts) == 8
    assert 1 <= most_sandboxes_at_once(result) <= 2
