"""A run graded by a service, at plan time: checked with its own key, named, warned of.

The plan activity runs for real against the loopback service (``tests/service_server.py``);
nothing is approved and no agent runs, which is the point: what is found here costs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from durabench.errors import ServiceAuthError
from durabench.models.benchmark_service import ServiceRetry, ServiceTarget
from durabench.models.run import PlanSummary, RunRequest
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from starter.console import plan_table
from tests.service_server import SCHEMA, ServiceServer
from tests.unit_plan import unit_plan_activities

KEY = "vals-plan-key-77c1d0"
BEARER = "bench-plan-key-1e93aa"
RETRY = ServiceRetry(max_attempts=2, backoff_s=0, conflict_wait_s=0)


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[ServiceServer]:
    monkeypatch.delenv("VALS_AUTH_KEY", raising=False)
    monkeypatch.setenv("BENCHMARK_API_KEY", BEARER)
    with ServiceServer({"q1": "42"}) as server:
        yield server


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.json"
    tests = [{"id": "q1", "question": "6 x 7?"}]
    path.write_text(json.dumps({"dataset_name": "validation", "tests": tests}))
    return path


async def _plan(tmp_path: Path, **request: Any) -> PlanSummary:
    settings = Settings(home=tmp_path / "home")
    acts = unit_plan_activities(settings)
    data = RunRequest(run_id="r1", suite="", **request)
    summary: PlanSummary = await ActivityEnvironment().run(acts.plan_run, data)
    return summary


def _table(summary: PlanSummary) -> str:
    out = Console(width=400, record=True)
    out.print(plan_table(summary))
    return out.export_text()


async def test_a_v1_run_with_only_the_bearer_key_is_refused_before_approval(
    service: ServiceServer, tmp_path: Path, tasks_file: Path
) -> None:
    target = ServiceTarget(url=service.url, api="v1", payload_schema=SCHEMA, retry=RETRY)
    with pytest.raises(ApplicationError) as refused:
        await _plan(tmp_path, agent="nop", service=target, dataset_file=str(tasks_file))
    assert refused.value.type == ServiceAuthError.__name__ and refused.value.non_retryable
    # The message a grading gets today: the call, the service's word, and the fix.
    assert f"POST {service.url}/v1/score was refused (403: v1 requires a Descope tenant key)" in (
        refused.value.message
    )
    assert "the v1 API accepts only VALS_AUTH_KEY" in refused.value.message
    assert "only BENCHMARK_API_KEY is set" in refused.value.message
    assert service.paths() == ["/v1/score"]  # one cheap call, with the run's own key
    assert service.received[0].headers["authorization"] == f"Bearer {BEARER}"
    assert not RunPaths.for_run(tmp_path / "home" / "runs", "r1").plan.exists()


async def test_a_legacy_run_checks_the_key_and_sends_the_dataset_files_name(
    service: ServiceServer, tmp_path: Path, tasks_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.faults.require_auth = True
    monkeypatch.delenv("BENCHMARK_API_KEY")
    target = ServiceTarget(url=service.url, retry=RETRY)
    with pytest.raises(ApplicationError, match="set VALS_AUTH_KEY or BENCHMARK_API_KEY"):
        await _plan(tmp_path, agent="nop", service=target, dataset_file=str(tasks_file))

    monkeypatch.setenv("BENCHMARK_API_KEY", BEARER)
    summary = await _plan(tmp_path / "2", agent="nop", service=target, dataset_file=str(tasks_file))
    assert summary.request.service is not None
    assert summary.request.service.dataset == "validation"  # forwarded, as the runner does
    assert service.received[-1].path == "/final-score/"
    assert service.received[-1].body == {"evaluation_results": {}, "dataset": "validation"}
    plan = RunPaths.for_run(tmp_path / "2" / "home" / "runs", "r1").plan
    assert '"dataset": "validation"' in plan.read_text()  # every grading reads it from here


async def test_an_agent_without_an_answer_is_warned_of_at_plan_time(
    service: ServiceServer, tmp_path: Path, tasks_file: Path
) -> None:
    target = ServiceTarget(url=service.url, retry=RETRY)
    summary = await _plan(tmp_path, agent="nop", service=target, dataset_file=str(tasks_file))
    [warning] = summary.warnings
    assert "agent nop leaves no final message" in warning and "--response-file" in warning
    table = _table(summary)
    assert "agent nop leaves no final message" in table
    assert "legacy API: grades by POST /evaluate-response/; scores by POST /final-score/" in table
    assert "pass_percentage / 100" in table

    from_file = target.model_copy(update={"response_file": "submission.patch"})
    kept = await _plan(tmp_path / "2", agent="nop", service=from_file, dataset_file=str(tasks_file))
    assert kept.warnings == ()


async def test_listing_a_dataset_says_it_is_a_v1_call_under_the_legacy_api(
    service: ServiceServer, tmp_path: Path
) -> None:
    service.faults.datasets = {"validation": [{"id": "q1", "question": "6 x 7?"}]}
    target = ServiceTarget(url=service.url, dataset="validation", retry=RETRY)
    with pytest.raises(ApplicationError, match="Listing a dataset's tasks is a v1 call"):
        await _plan(tmp_path, agent="nop", service=target)
    assert service.paths() == ["/v1/datasets/validation/tasks"]
    assert "lists tasks by GET /v1/datasets/validation/tasks (v1)" in target.calls(True)


async def test_a_legacy_404_refuses_the_run_and_a_v1_one_does_not(
    service: ServiceServer, tmp_path: Path, tasks_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.faults.reject, service.faults.reject_detail = 404, "dataset 'validation' not found"
    legacy = ServiceTarget(url=service.url, retry=RETRY)
    with pytest.raises(ApplicationError, match="found nothing .*check the dataset name"):
        await _plan(tmp_path, agent="nop", service=legacy, dataset_file=str(tasks_file))
    monkeypatch.setenv("VALS_AUTH_KEY", KEY)  # a v1 service may not know the check's run
    v1 = ServiceTarget(url=service.url, api="v1", payload_schema=SCHEMA, retry=RETRY)
    planned = await _plan(tmp_path / "2", agent="nop", service=v1, dataset_file=str(tasks_file))
    assert planned.task_count == 1
