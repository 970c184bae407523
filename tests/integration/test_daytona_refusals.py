"""A Daytona API that refuses deterministically is not retried, and says what to do.

Against an API without object storage (``GET /api/object-storage/push-access`` answered
404) a create used to fail "Daytona has no such sandbox" and be retried as a missing
sandbox, attempt after attempt.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.plan import PlanActivities
from durabench.errors import NON_RETRYABLE
from durabench.models.run import RunRequest
from durabench.sandbox import SandboxSpec
from durabench.settings.values import Settings
from tests.integration.daytona_fixtures import built_task_image, daytona_options_for
from tests.registry_standin import registry_serving

pytestmark = pytest.mark.docker
daytona = pytest.importorskip("durabench.sandbox.daytona")

PUSH_ACCESS = "/api/object-storage/push-access"


async def test_a_missing_endpoint_is_refused_once_naming_it(
    standin: object, settings: Settings, tmp_path: Path, daytona_clients_closed: None
) -> None:
    """push-access 404: one request, a non-retryable error naming the endpoint and a fix."""
    image = built_task_image(settings, tmp_path)
    spec = SandboxSpec(name=f"durabench-404-{uuid.uuid4().hex[:8]}", image=image)
    standin.fail("GET", PUSH_ACCESS, [404] * 10)  # type: ignore[attr-defined]
    before = len(standin.traffic)  # type: ignore[attr-defined]
    try:
        with pytest.raises(NON_RETRYABLE) as refused:
            await daytona.DaytonaSandbox(spec, daytona_options_for(standin)).start()  # type: ignore[arg-type]
    finally:
        standin._faults.clear()  # type: ignore[attr-defined]
    message = str(refused.value)
    assert "no such sandbox" not in message
    assert "404" in message and "--sandbox docker" in message
    asked = [r for m, r in standin.traffic[before:] if r == PUSH_ACCESS]  # type: ignore[attr-defined]
    assert len(asked) == 1  # asked once: a refusal is not retried


def _plan_on_daytona(settings: Settings) -> tuple[object, RunRequest]:
    on_daytona = settings.model_copy(update={"sandbox": "daytona"})
    request = RunRequest(run_id=f"pre-{uuid.uuid4().hex[:6]}", suite="pytorch", parallel=1)
    return PlanActivities(on_daytona), request


@pytest.mark.parametrize(
    ("fault", "named"),
    [
        (
            ("GET", PUSH_ACCESS, 404),
            "builds cannot be uploaded: GET /api/object-storage/push-access",
        ),
        (("GET", "/api/sandbox", 404), "no Daytona API at"),
        (("GET", "/api/sandbox", 403), "DAYTONA_API_KEY"),
    ],
)
async def test_the_plan_checks_the_backend_before_approval(
    standin: object,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    daytona_clients_closed: None,
    fault: tuple[str, str, int],
    named: str,
) -> None:
    """The plan is refused, in one line naming what failed, before anything is approved."""
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    acts, request = _plan_on_daytona(settings)
    method, prefix, status = fault
    standin.fail(method, prefix, [status])  # type: ignore[attr-defined]
    try:
        with pytest.raises(ApplicationError) as refused:
            await ActivityEnvironment().run(acts.plan_run, request)  # type: ignore[attr-defined]
    finally:
        standin._faults.clear()  # type: ignore[attr-defined]
    assert refused.value.non_retryable
    message = refused.value.message
    assert "\n" not in message and message.startswith("Daytona preflight: ") and named in message


async def test_a_daytona_that_answers_passes_the_preflight(
    standin: object,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    daytona_clients_closed: None,
) -> None:
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    acts, request = _plan_on_daytona(settings)
    plan = await ActivityEnvironment().run(acts.plan_run, request)  # type: ignore[attr-defined]
    assert plan.sandbox == "daytona"


def _checking_base(
    standin: object, settings: Settings, monkeypatch: pytest.MonkeyPatch, image: str
) -> tuple[object, RunRequest]:
    """A plan on the stand-in with the registry check on (its fixture turns it off)."""
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("DURABENCH_DAYTONA_BASE_CHECK", "true")
    return _plan_on_daytona(settings.model_copy(update={"base_image": image}))


async def test_a_base_image_daytona_cannot_pull_refuses_the_plan(
    standin: object,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    daytona_clients_closed: None,
) -> None:
    """A base image only the worker reaches (its loopback's registry): refused before approval."""
    with registry_serving({"durabench/base": "open"}) as registry:
        image = f"{registry.host()}/durabench/base:bookworm"
        acts, request = _checking_base(standin, settings, monkeypatch, image)
        with pytest.raises(ApplicationError) as refused:
            await ActivityEnvironment().run(acts.plan_run, request)  # type: ignore[attr-defined]
    assert refused.value.non_retryable
    message = refused.value.message
    assert message.startswith(f"Daytona preflight: Daytona cannot pull the base image {image}")
    assert "\n" not in message


async def test_a_registry_out_of_reach_is_a_warning_of_the_plan(
    standin: object,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    daytona_clients_closed: None,
) -> None:
    image = "registry.invalid/durabench/base:bookworm"  # no resolver answers it (RFC 6761)
    acts, request = _checking_base(standin, settings, monkeypatch, image)
    plan = await ActivityEnvironment().run(acts.plan_run, request)  # type: ignore[attr-defined]
    assert any(w.startswith("could not ask https://registry.invalid") for w in plan.warnings)
