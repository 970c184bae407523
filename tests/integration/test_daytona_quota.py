"""A Daytona quota is enforced, not only shown: never more sandboxes at once than it allows.

The stand-in counts the sandboxes that exist at once (:attr:`DaytonaStandIn.most_at_once`);
the run asks for far more (``--parallel`` over the quota) and must still complete.
"""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.runs import finished_run

pytestmark = pytest.mark.docker
pytest.importorskip("daytona")


async def test_quota_bounds_sandboxes_at_once_on_daytona(
    client: Client, settings: Settings, standin: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quota 2, 4 pairs asked (8 sandboxes wanted): at most 2 exist at once, all complete."""
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("DURABENCH_DAYTONA_BACKOFF_SEC", "0.05")
    standin.reset_most_at_once()  # type: ignore[attr-defined]
    request = RunRequest(
        run_id=f"it-{uuid.uuid4().hex[:8]}",
        suite="pytorch",
        agent=AgentSpec(name="oracle"),
        parallel=4,
    )
    quota = settings.model_copy(update={"sandbox": "daytona", "sandbox_quota": 2})
    _, result = await finished_run(request, client, quota)

    assert len(result.attempts) == 2 * len(load_suite("pytorch"))
    assert {(a.exit_class, a.reward) for a in result.attempts} == {("completed", 1.0)}
    assert standin.most_at_once == 2  # type: ignore[attr-defined]
    assert standin.containers() == []  # type: ignore[attr-defined]
