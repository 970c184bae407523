"""A Daytona-only worker needs no Docker daemon (docs/daytona.md): every verb it runs works
with ``DOCKER_HOST`` pointing at a closed socket."""

from __future__ import annotations

import gc
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.sandbox import SandboxSpec
from durabench.settings.values import Settings
from runtime.client import deployment_of
from starter.resume import resume_main
from starter.sweep import sweep_main
from tests.integration.daytona_fixtures import daytona_options_for
from tests.integration.runs import finished_run

pytestmark = pytest.mark.docker
daytona = pytest.importorskip("durabench.sandbox.daytona")


@pytest.fixture
def no_docker(standin: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Daytona configured (the stand-in); Docker not reachable from this process."""
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("DURABENCH_SANDBOX", "daytona")
    monkeypatch.setenv("DURABENCH_DAYTONA_BACKOFF_SEC", "0.05")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/closed.sock")


# docker-py leaks the socket of its failed version probe; collected inside the test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_sweep_on_a_daytona_worker_without_docker(
    client: Client,
    standin: object,
    settings: Settings,
    no_docker: None,
    daytona_clients_closed: None,
) -> None:
    """The deployment's orphaned Daytona sandbox is removed; no Docker is asked for."""
    spec = SandboxSpec(
        name=f"durabench-nodocker-{uuid.uuid4().hex[:8]}",
        image=settings.base_image,
        labels={
            "durabench.run": f"gone-{uuid.uuid4().hex[:6]}",
            "durabench.task": "t",
            "durabench.lane": "baseline",
            "durabench.attempt": "1",
            "durabench.deployment": await deployment_of(client),
        },
    )
    await daytona.DaytonaSandbox(spec, daytona_options_for(standin)).start()  # type: ignore[arg-type]
    removed = await sweep_main(client=client)
    assert removed == [spec.name]
    assert spec.name not in standin.boxes()  # type: ignore[attr-defined]
    gc.collect()


# docker-py leaks the socket of its failed version probe; collected inside the test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_paired_run_and_its_worker_on_daytona_without_docker(
    client: Client, settings: Settings, no_docker: None, daytona_clients_closed: None
) -> None:
    """``starter run`` (plan, in-process worker, its sweep, every phase) and ``resume``."""
    request = RunRequest(
        run_id=f"nodocker-{uuid.uuid4().hex[:6]}",
        suite="pytorch",
        agent=AgentSpec(name="oracle"),
        parallel=2,
    )
    on_daytona = settings.model_copy(update={"sandbox": "daytona"})
    _, result = await finished_run(request, client, on_daytona)
    assert {(a.exit_class, a.reward) for a in result.attempts} == {("completed", 1.0)}
    with pytest.raises(ConfigError, match="nothing to resume"):  # got past its Docker check
        await resume_main(request.run_id, client, on_daytona)
    gc.collect()
