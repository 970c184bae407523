"""The benchmark service client against a real HTTP service on loopback."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any, get_args

import pytest
import structlog
from pydantic import ValidationError

from durabench.errors import (
    NON_RETRYABLE,
    ServiceAuthError,
    ServiceError,
    ServiceProtocolError,
    ServiceRejected,
    ServiceUnsupported,
)
from durabench.models.verdict import ExitClass
from durabench.service import (
    GENERATION_STATUS,
    EvalResult,
    EvalResultData,
    EvaluateResponseRequest,
    FinalScoreRequest,
    FinalScoreResponse,
    Generation,
    ServiceAuth,
    ServiceClient,
    ServiceRetry,
    ServiceTarget,
    V1DatasetTasks,
    V1EvalRequest,
    V1EvalResponse,
    V1Payload,
    V1ScoreRequest,
    V1ScoreResponse,
    V1TaskEval,
    generation_status,
    grade,
    parse_retry_after,
    service_auth_from_env,
    ungraded_status,
)
from tests.service_server import SCHEMA, ServiceServer

KEY = "vals-test-key-3f9a1c"
BEARER = "bench-test-key-77e0b2"
ANSWERS = {"t1": "42", "t2": "7", "t3": "x"}


class Naps:
    """A sleep that records how long it was asked to wait, and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def service() -> Iterator[ServiceServer]:
    with ServiceServer(ANSWERS) as server:
        yield server


@pytest.fixture
def naps() -> Naps:
    return Naps()


def client_for(
    url: str, auth: ServiceAuth, naps: Naps, *, attempts: int = 4, retry_after_max_s: float = 5
) -> ServiceClient:
    retry = ServiceRetry(
        max_attempts=attempts,
        backoff_s=0.5,
        backoff_max_s=2,
        conflict_wait_s=3,
        retry_after_max_s=retry_after_max_s,
        timeout_s=10,
    )
    return ServiceClient(url, auth, retry=retry, sleep=naps)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- auth -----------------------------------------------------------------------------------


async def test_tenant_key_wins_over_bearer(service: ServiceServer, naps: Naps) -> None:
    auth = service_auth_from_env({"VALS_AUTH_KEY": KEY, "BENCHMARK_API_KEY": BEARER})
    async with client_for(service.url, auth, naps) as client:
        await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    (sent,) = service.received
    assert sent.headers["x-descope-api-key"] == KEY
    assert "authorization" not in sent.headers


async def test_bearer_key_when_only_it_is_set(service: ServiceServer, naps: Naps) -> None:
    auth = service_auth_from_env({"BENCHMARK_API_KEY": BEARER, "VALS_AUTH_KEY": "  "})
    async with client_for(service.url, auth, naps) as client:
        await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    (sent,) = service.received
    assert sent.headers["authorization"] == f"Bearer {BEARER}"
    assert "x-descope-api-key" not in sent.headers


async def test_no_key_is_refused_with_both_variables_named(
    service: ServiceServer, naps: Naps
) -> None:
    service.faults.require_auth = True
    async with client_for(service.url, service_auth_from_env({}), naps) as client:
        with pytest.raises(ServiceAuthError) as err:
            await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert "VALS_AUTH_KEY" in str(err.value) and "BENCHMARK_API_KEY" in str(err.value)
    assert len(service.received) == 1 and naps.waits == []


async def test_v1_with_only_a_bearer_key_says_vals_auth_key_is_needed(
    service: ServiceServer, naps: Naps
) -> None:
    auth = service_auth_from_env({"BENCHMARK_API_KEY": BEARER})
    request = V1EvalRequest(
        run_id="r1",
        task_id="t1",
        payload=V1Payload.model_validate({"type": "text", "schema": SCHEMA, "data": "42"}),
    )
    async with client_for(service.url, auth, naps) as client:
        with pytest.raises(ServiceAuthError) as err:
            await client.evaluate(request)
    message = str(err.value)
    assert "403" in message and "v1 requires a Descope tenant key" in message
    assert "only VALS_AUTH_KEY" in message and "only BENCHMARK_API_KEY is set" in message
    assert len(service.received) == 1


def test_auth_repr_hides_the_key() -> None:
    auth = ServiceAuth("descope", KEY)
    assert KEY not in repr(auth) and KEY not in str(auth)


# --- wire shapes ----------------------------------------------------------------------------


async def test_final_score_sends_missing_tasks_as_null(service: ServiceServer, naps: Naps) -> None:
    evaluated = EvalResult(
        task_id="t1", status="evaluated", result=EvalResultData(pass_percentage=100.0)
    )
    request = FinalScoreRequest(
        evaluation_results={"t1": evaluated, "t2": None}, dataset="validation"
    )
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        score = await client.final_score(request)
    (sent,) = service.received
    assert sent.body["evaluation_results"]["t2"] is None
    assert sent.body["evaluation_results"]["t1"]["error"] is None
    assert sent.body["dataset"] == "validation"
    assert score.tasks_evaluated == ("t1", "t2") and score.final_score == 0.5


async def test_absent_dataset_is_left_out(service: ServiceServer, naps: Naps) -> None:
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        data = await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert service.received[0].body == {"task_id": "t1", "response": "42"}
    assert data.pass_percentage == 100.0 and data.model_extra == {"grader": "exact"}


async def test_v1_evaluate_and_score(service: ServiceServer, naps: Naps) -> None:
    auth = ServiceAuth("descope", KEY)
    payload = V1Payload(type="text", payload_schema=SCHEMA, data="7")
    async with client_for(service.url, auth, naps) as client:
        graded = await client.evaluate(V1EvalRequest(run_id="r1", task_id="t2", payload=payload))
        entry = V1TaskEval(status=graded.status, result=graded.result)
        score = await client.score(
            V1ScoreRequest(run_id="r1", evaluation_results={"t2": entry, "t3": None})
        )
    assert service.received[0].body["payload"] == {"type": "text", "schema": SCHEMA, "data": "7"}
    assert graded.status == "evaluated" and graded.evaluator_version == "test-1.0"
    assert service.received[1].body["evaluation_results"]["t3"] is None
    assert score.run_id == "r1" and score.final_score == 0.5


async def test_body_outside_the_protocol_is_a_protocol_error(
    service: ServiceServer, naps: Naps
) -> None:
    service.faults.garbage = 1  # a result's fields are all optional: a score's are not
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        with pytest.raises(ServiceProtocolError, match="tasks_evaluated"):
            await client.final_score(FinalScoreRequest(evaluation_results={}))


def _example(section: dict[str, Any], starts: str) -> Any:
    (found,) = [value for key, value in section.items() if key.startswith(starts)]
    return found


def test_models_read_the_shared_schema_examples(shared_fixtures: Path) -> None:
    examples = json.loads((shared_fixtures / "service" / "schema_examples.json").read_text())
    legacy, v1 = examples["legacy_http"], _example(examples, "v1_http")
    EvalResult.model_validate(_example(examples["on_disk"], "results/<run_id>/<task_id>/eval"))
    EvaluateResponseRequest.model_validate(_example(legacy, "POST /evaluate-response/ request"))
    final = dict(_example(legacy, "POST /final-score/ request"))
    final.pop("task_outcomes")
    assert FinalScoreRequest.model_validate(final).evaluation_results["t2"] is None
    FinalScoreResponse.model_validate(_example(legacy, "POST /final-score/ response"))
    request = V1EvalRequest.model_validate(_example(v1, "POST /v1/evaluate request"))
    assert request.payload.payload_schema == "fabv2.text.v1"
    V1EvalResponse.model_validate(_example(v1, "POST /v1/evaluate response"))
    score = V1ScoreRequest.model_validate(_example(v1, "POST /v1/score request"))
    assert score.evaluation_results["t3"] is None
    V1ScoreResponse.model_validate(_example(v1, "POST /v1/score response"))
    V1DatasetTasks.model_validate(_example(v1, "GET /v1/datasets/"))


# --- retries --------------------------------------------------------------------------------


async def test_rate_limit_waits_as_long_as_retry_after_says(
    service: ServiceServer, naps: Naps
) -> None:
    service.faults.rate_limited, service.faults.retry_after = 2, "1"
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        data = await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert data.pass_percentage == 100.0
    assert service.paths() == ["/evaluate-response/"] * 3
    assert naps.waits == [1.0, 1.0]


async def test_rate_limit_with_an_http_date_in_the_past_retries_at_once(
    service: ServiceServer, naps: Naps
) -> None:
    service.faults.rate_limited = 1
    service.faults.retry_after = format_datetime(datetime(2020, 1, 1, tzinfo=UTC), usegmt=True)
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert len(service.received) == 2 and naps.waits == [0.0]


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    in_90_s = format_datetime(datetime(2026, 5, 1, 12, 1, 30, tzinfo=UTC), usegmt=True)
    assert parse_retry_after(in_90_s, now=lambda: now) == 90.0
    assert parse_retry_after("7") == 7.0 and parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None


async def test_a_long_retry_after_is_left_to_temporal(service: ServiceServer, naps: Naps) -> None:
    service.faults.rate_limited, service.faults.retry_after = 1, "3600"
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        with pytest.raises(ServiceError) as err:
            await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert type(err.value) is ServiceError and err.value.retry_after_s == 3600.0
    assert "evaluation quota exceeded" in str(err.value)
    assert len(service.received) == 1 and naps.waits == []


async def test_server_errors_are_retried_with_growing_waits(
    service: ServiceServer, naps: Naps
) -> None:
    service.faults.server_errors = 3
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        data = await client.evaluate_response(EvaluateResponseRequest(task_id="t2", response="7"))
    assert data.pass_percentage == 100.0 and len(service.received) == 4
    assert len(naps.waits) == 3
    assert 0.25 <= naps.waits[0] <= 0.5 and 1.0 <= naps.waits[2] <= 2.0


async def test_server_errors_past_the_budget_are_a_transient_error(
    service: ServiceServer, naps: Naps
) -> None:
    service.faults.server_errors = 10
    async with client_for(service.url, ServiceAuth("none"), naps, attempts=3) as client:
        with pytest.raises(ServiceError) as err:
            await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert type(err.value) is ServiceError and type(err.value) not in NON_RETRYABLE
    assert "503" in str(err.value) and "grading sandbox unavailable" in str(err.value)
    assert len(service.received) == 3 and len(naps.waits) == 2


async def test_grading_in_flight_waits_and_retries(service: ServiceServer, naps: Naps) -> None:
    service.faults.conflicts = 2
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert len(service.received) == 3 and naps.waits == [3.0, 3.0]


async def test_a_dropped_connection_is_retried(service: ServiceServer, naps: Naps) -> None:
    service.faults.hang_ups = 1
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert len(service.received) == 2 and len(naps.waits) == 1


async def test_no_service_listening_is_a_transient_error_after_the_budget(naps: Naps) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    async with client_for(url, ServiceAuth("none"), naps, attempts=2) as client:
        with pytest.raises(ServiceError, match="check that the service is up") as err:
            await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert type(err.value) is ServiceError and len(naps.waits) == 1


@pytest.mark.parametrize("status", [400, 413, 422])
async def test_other_client_errors_are_not_retried_and_carry_the_reason(
    service: ServiceServer, naps: Naps, status: int
) -> None:
    service.faults.reject, service.faults.reject_detail = status, "answer exceeds 1 MB"
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        with pytest.raises(ServiceRejected) as err:
            await client.evaluate_response(EvaluateResponseRequest(task_id="t1", response="42"))
    assert type(err.value) in NON_RETRYABLE
    assert f"{status}: answer exceeds 1 MB" in str(err.value)
    assert f"{service.url}/evaluate-response/" in str(err.value)
    assert len(service.received) == 1 and naps.waits == []


async def test_unknown_task_says_what_to_check(service: ServiceServer, naps: Naps) -> None:
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        with pytest.raises(ServiceRejected, match="check the dataset name and the task ids"):
            await client.evaluate_response(EvaluateResponseRequest(task_id="t9", response=""))


# --- datasets -------------------------------------------------------------------------------


async def test_dataset_listing_not_implemented_points_to_dataset_file(
    service: ServiceServer, naps: Naps
) -> None:
    async with client_for(service.url, ServiceAuth("descope", KEY), naps) as client:
        with pytest.raises(ServiceUnsupported) as err:
            await client.dataset_tasks("validation")
    assert "does not list datasets" in str(err.value) and "--dataset-file" in str(err.value)
    assert "501" in str(err.value) and type(err.value) in NON_RETRYABLE
    assert len(service.received) == 1 and naps.waits == []


async def test_dataset_listing(service: ServiceServer, naps: Naps) -> None:
    service.faults.datasets = {"a b": [{"id": "t1", "question": "q1", "timeout": 60, "lang": "en"}]}
    async with client_for(service.url, ServiceAuth("descope", KEY), naps) as client:
        tasks = await client.dataset_tasks("a b")
    assert service.paths() == ["/v1/datasets/a%20b/tasks"]
    assert tasks.tasks[0].id == "t1" and tasks.tasks[0].model_extra == {"lang": "en"}


# --- status mapping and grading -------------------------------------------------------------


def test_every_exit_class_has_a_generation_status() -> None:
    assert set(GENERATION_STATUS) == set(get_args(ExitClass))
    assert generation_status("completed") == "success"
    assert generation_status("model_no_code") == "success"
    assert generation_status("model_timeout") == "max_time"
    assert generation_status("model_context_exhausted") == "max_turns"
    assert generation_status("model_agent_error") == "error"
    assert generation_status("infra_rate_limit") == "error"
    assert ungraded_status("success") is None
    assert ungraded_status("max_time") == ungraded_status("max_turns") == "did_not_complete"
    assert ungraded_status("error") == "generation_error"


def _gen(task_id: str, exit_class: ExitClass, response: str) -> Generation:
    return Generation("r1", task_id, "baseline", 1, exit_class, response)


async def test_a_timed_out_generation_is_not_sent(service: ServiceServer, naps: Naps) -> None:
    target = ServiceTarget(url=service.url)
    async with client_for(service.url, ServiceAuth("none"), naps) as client:
        graded = await grade(client, target, _gen("t1", "model_timeout", "42"))
    assert graded.status == "did_not_complete" and graded.result is None
    assert service.received == []


async def test_a_refusal_for_one_task_grades_it_as_error(
    service: ServiceServer, naps: Naps
) -> None:
    target = ServiceTarget(url=service.url, api="v1", payload_schema="other.v1")
    async with client_for(service.url, ServiceAuth("descope", KEY), naps) as client:
        graded = await grade(client, target, _gen("t1", "completed", "42"))
    assert graded.status == "error" and "wrong payload type or schema" in str(graded.errors)
    assert "wrong payload type or schema" in (graded.legacy().error or "")


def test_target_refuses_credentials_in_the_url_and_v1_without_schema() -> None:
    with pytest.raises(ValidationError, match="VALS_AUTH_KEY"):
        ServiceTarget(url=f"http://user:{KEY}@127.0.0.1:1")
    with pytest.raises(ValidationError, match="payload_schema"):
        ServiceTarget(url="http://127.0.0.1:1", api="v1")
    with pytest.raises(ValidationError, match="--service-url"):
        ServiceTarget(url="127.0.0.1:8000")


# --- secrets --------------------------------------------------------------------------------


async def test_the_key_never_appears_in_errors_or_logs(
    service: ServiceServer,
    naps: Naps,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    service.faults.server_errors = 1
    service.faults.reject, service.faults.echo_auth = 400, True
    raised: list[str] = []
    with structlog.testing.capture_logs() as logs:
        for auth in (ServiceAuth("descope", KEY), ServiceAuth("bearer", BEARER)):
            async with client_for(service.url, auth, naps) as client:
                with pytest.raises(ServiceRejected) as err:
                    await client.evaluate_response(
                        EvaluateResponseRequest(task_id="t1", response="42")
                    )
            raised.append(f"{err.value} {err.value!r} {err.value.__cause__!r}")
    out, errs = capfd.readouterr()
    assert any(entry["event"] == "service retry" for entry in logs)
    assert "[REDACTED]" in raised[0] and "[REDACTED]" in raised[1]
    for text in (*raised, repr(logs), caplog.text, out, errs):
        assert KEY not in text and BEARER not in text


def test_public_surface_is_sorted_and_importable() -> None:
    import durabench.service as service

    exported = service.__all__
    assert list(exported) == sorted(exported, key=lambda s: (not s.isupper(), s))
    assert all(hasattr(service, name) for name in exported)
