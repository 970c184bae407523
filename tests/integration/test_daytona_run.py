"""A paired run of the bundled suite on the Daytona backend: the real SDK, the stand-in."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.daytona_fixtures import ENDPOINTS_FILE, record_endpoints
from tests.integration.runs import containers_of, finished_run

pytestmark = pytest.mark.docker
pytest.importorskip("daytona")


async def test_paired_oracle_run_on_daytona(
    client: Client, settings: Settings, standin: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every pair scores 1 with each attempt in a Daytona sandbox, and none is left."""
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("DURABENCH_DAYTONA_BACKOFF_SEC", "0.05")
    before = standin.creates  # type: ignore[attr-defined]
    builds, sent = standin.builds, len(standin.create_requests)  # type: ignore[attr-defined]
    request = RunRequest(
        run_id=f"it-{uuid.uuid4().hex[:8]}",
        suite="pytorch",
        agent=AgentSpec(name="oracle"),
        parallel=4,
    )
    on_daytona = settings.model_copy(update={"sandbox": "daytona"})
    _, result = await finished_run(request, client, on_daytona)

    assert result.plan.sandbox == "daytona" and "auto-stop" in result.plan.sandbox_limits
    assert len(result.attempts) == 2 * len(load_suite("pytorch"))
    for attempt in result.attempts:
        assert (attempt.exit_class, attempt.reward) == ("completed", 1.0), attempt
    assert standin.creates - before == len(result.attempts)  # type: ignore[attr-defined]
    assert standin.containers() == []  # type: ignore[attr-defined]
    infos = [r.build_info for r in standin.create_requests[sent:]]  # type: ignore[attr-defined]
    assert all(i.context_hashes and "durabench-task/" not in i.dockerfile_content for i in infos)
    distinct = {(i.dockerfile_content, tuple(i.context_hashes)) for i in infos}
    assert len(distinct) < len(infos)  # the two lanes of a task share its build
    assert standin.builds - builds <= len(distinct)  # type: ignore[attr-defined]
    assert containers_of(request.run_id) == []  # nothing ran on the local backend
    record_endpoints(standin, ENDPOINTS_FILE)
