"""What an oracle attempt asks of the Docker daemon, counted: requests and execs.

Each request costs the daemon (and each exec a ``runc`` process besides); docs/overhead.md
says where they go. Counts, not timings: they do not depend on the machine's load, so a
change that adds a round trip to every attempt shows here. The attempt runs its phases
as the worker does (the activities in process, real Docker), its image already built.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.sandbox import shared_docker_client
from durabench.settings.values import Settings
from tests.integration.oracle_attempt import oracle_ref, run_phases

pytestmark = pytest.mark.docker


def _kind(method: str, url: str) -> str:
    """``GET containers/json``, ``POST exec/start``...: the request without its ids."""
    parts = url.split("?")[0].split("/v1.")[-1].split("/")[1:]
    return f"{method} {parts[0]}/{parts[-1]}" if len(parts) > 2 else f"{method} {parts[0]}"


async def test_an_oracle_attempt_costs_what_it_did(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    acts, env = SandboxActivities(settings, "q", "test"), ActivityEnvironment()
    # Builds (or finds) the image, so the count is an attempt's, not a build's.
    warm = oracle_ref("requests")
    await env.run(acts.provision_sandbox, warm)
    await acts.teardown_sandbox(warm)

    api = shared_docker_client().api
    sent: Counter[str] = Counter()
    send = api.send

    def counted(request: Any, **kwargs: Any) -> Any:
        sent[_kind(request.method, request.url)] += 1
        return send(request, **kwargs)

    monkeypatch.setattr(api, "send", counted)
    ref = oracle_ref("requests")
    try:
        agent, verified, out = await run_phases(acts, ref)
    finally:
        monkeypatch.undo()
        await acts.teardown_sandbox(ref)
    assert (agent.exit_code, verified.reward) == (0, 1.0)
    assert out.verdict is not None and out.verdict.exit_class == "completed"
    # The agent's step: one exec starts it and sees its end (no marker read before it).
    # The tests: one exec clears /tests and the verifier's directory, then runs them.
    assert sent["POST containers/exec"] == 2, sorted(sent.items())
    # Each archive read makes the daemon run a ``docker-tar`` of its own, each ``top`` a
    # ``ps``. The workspace after the agent, and nothing else: the one before it was kept
    # from the warm attempt on the same image, and with the daemon on this host the
    # ``/logs`` volumes (the verifier's directory, read for the reward and kept for the
    # collect; the collect's other three) are read from the host.
    assert sent["GET containers/archive"] == 1, sorted(sent.items())
    # With the daemon on this host, what runs in the container is counted from its
    # cgroup, not by the daemon's ``ps``.
    assert sent["GET containers/top"] == 0, sorted(sent.items())
    # The container's image id is looked up once (the workspace cache's key).
    assert sum(sent.values()) == 18, sorted(sent.items())
