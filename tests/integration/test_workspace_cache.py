"""The workspace before the agent, read once per image: the diff is the same either way.

Oracle attempts run their phases as the worker does (activities in process, real Docker).
The first on an image reads the workspace out of its sandbox and keeps it; the next
finds it kept, reads the workspace only after its agent, and writes the same patch.
An attempt whose setup differs reads its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from activities import SandboxActivities
from durabench.models.attempt import AttemptRef
from durabench.sandbox import shared_docker_client
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from tests.integration.oracle_attempt import TASK, oracle_ref, run_phases

pytestmark = pytest.mark.docker


async def _attempt(
    acts: SandboxActivities, ref: AttemptRef, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, Path]:
    """Run ``ref``'s phases; the workspace reads it made, and its directory."""
    api = shared_docker_client().api
    send, reads = api.send, []

    def counted(request: Any, **kwargs: Any) -> Any:
        url = urlsplit(request.url)
        if request.method == "GET" and url.path.endswith("/archive"):
            reads.extend(parse_qs(url.query).get("path", []))
        return send(request, **kwargs)

    monkeypatch.setattr(api, "send", counted)
    try:
        _, verified, _ = await run_phases(acts, ref)
    finally:
        monkeypatch.undo()
        await acts.teardown_sandbox(ref)
    assert verified.reward == 1.0
    store = RunPaths.for_run(acts.settings.runs_dir, ref.run_id).attempt(TASK, ref.lane, 1)
    return reads.count("/workspace"), store


async def test_the_second_attempt_on_an_image_reads_the_workspace_once(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    acts = SandboxActivities(settings, "q", "test")
    first_reads, first = await _attempt(acts, oracle_ref("wscache"), monkeypatch)
    second_reads, second = await _attempt(acts, oracle_ref("wscache"), monkeypatch)
    assert (first_reads, second_reads) == (2, 1)  # before and after the agent; after only
    before = ".workspace-before.tar"
    assert (second / before).read_bytes() == (first / before).read_bytes()
    patch = (first / "submission.patch").read_text()
    assert "+" in patch
    assert (second / "submission.patch").read_text() == patch


async def test_an_attempt_whose_setup_differs_reads_its_own(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    acts = SandboxActivities(settings, "q", "test")
    await _attempt(acts, oracle_ref("wscache"), monkeypatch)
    agent_user = oracle_ref("wscache", {"user": "agent"})  # its setup adds a user
    reads, _ = await _attempt(acts, agent_user, monkeypatch)
    assert reads == 2
