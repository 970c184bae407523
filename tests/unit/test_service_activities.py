"""The service activities on a recorded run, against a real HTTP service on loopback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import structlog
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.grading import ServiceActivities
from durabench.errors import ConfigError, ServiceAuthError
from durabench.models.results import AttemptResult
from durabench.models.run import RunPlan, RunRequest, TaskRef
from durabench.models.verdict import ExitClass
from durabench.service import (
    EvaluateAttemptInput,
    RunScore,
    ScoreRunInput,
    ServiceRetry,
    ServiceTarget,
    TaskGrade,
)
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from tests.service_server import ARTIFACT_SCHEMA, SCHEMA, ServiceServer

KEY = "vals-activity-key-5d21ee"
BEARER = "bench-activity-key-90ab4f"
RETRY = ServiceRetry(max_attempts=3, backoff_s=0, conflict_wait_s=0, retry_after_max_s=60)


async def _no_sleep(seconds: float) -> None:
    return None


@pytest.fixture
def service() -> Iterator[ServiceServer]:
    with ServiceServer({"t1": "42", "t2": "7", "t3": "x", "t4": "y"}) as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A run ``r1`` of four tasks with baseline attempts recorded for t1, t2 and t4."""
    monkeypatch.delenv("VALS_AUTH_KEY", raising=False)
    monkeypatch.delenv("BENCHMARK_API_KEY", raising=False)
    settings = Settings(home=tmp_path / "home")
    run = RunPaths.for_run(settings.runs_dir, "r1")
    tasks = tuple(TaskRef(task_id=t, task_dir=str(tmp_path / t)) for t in ("t1", "t2", "t3", "t4"))
    plan = RunPlan(
        request=RunRequest(run_id="r1", suite="svc"),
        lanes=("baseline",),
        tasks=tasks,
        task_count=len(tasks),
        estimated_agent_hours=0.1,
        results_dir=str(run.root),
    )
    run.root.mkdir(parents=True)
    run.plan.write_text(plan.model_dump_json())
    recorded: list[tuple[str, ExitClass, str]] = [
        ("t1", "completed", "42"),
        ("t2", "model_timeout", "7"),
        ("t4", "infra_rate_limit", "y"),
    ]
    for task_id, exit_class, answer in recorded:
        _record(run, task_id, exit_class, answer)
    return settings


def _record(run: RunPaths, task_id: str, exit_class: ExitClass, answer: str) -> None:
    attempt = run.attempt(task_id, "baseline", 1)
    attempt.mkdir(parents=True)
    result = AttemptResult(
        run_id="r1",
        task_id=task_id,
        lane="baseline",
        attempt=1,
        exit_class=exit_class,
        agent="replay",
        model="m",
        last_message=answer,
    )
    (attempt / "result.json").write_text(result.model_dump_json())


def _evaluate(target: ServiceTarget, task_id: str, force: bool = False) -> EvaluateAttemptInput:
    return EvaluateAttemptInput(
        service=target, run_id="r1", task_id=task_id, lane="baseline", force=force
    )


async def test_a_lane_is_graded_and_scored_with_missing_tasks_as_null(
    service: ServiceServer, settings: Settings
) -> None:
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    target = ServiceTarget(url=service.url, dataset="validation", retry=RETRY)
    graded = [await env.run(acts.evaluate_attempt, _evaluate(target, t)) for t in ("t1", "t2")]
    assert [(g.status, g.graded, g.pass_percentage) for g in graded] == [
        ("evaluated", True, 100.0),
        ("did_not_complete", False, None),
    ]
    score = await env.run(
        acts.score_run, ScoreRunInput(service=target, run_id="r1", lane="baseline")
    )
    assert service.paths() == ["/evaluate-response/", "/final-score/"]
    sent = service.received[1].body
    assert sent["dataset"] == "validation"
    assert sent["evaluation_results"]["t2"]["status"] == "did_not_complete"
    assert sent["evaluation_results"]["t3"] is None and sent["evaluation_results"]["t4"] is None
    assert (score.final_score, score.tasks_graded, score.tasks_missing) == (0.25, 2, 2)
    stored = RunScore.model_validate_json(Path(score.score_path).read_text())
    assert stored.tasks_missing == ("t3", "t4") and not stored.complete


async def test_rescoring_reuses_gradings_and_force_grades_again(
    service: ServiceServer, settings: Settings
) -> None:
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    target = ServiceTarget(url=service.url, retry=RETRY)
    first = await env.run(acts.evaluate_attempt, _evaluate(target, "t1"))
    again = await env.run(acts.evaluate_attempt, _evaluate(target, "t1"))
    assert (first.graded, again.graded) == (True, False)
    assert service.paths() == ["/evaluate-response/"]
    forced = await env.run(acts.evaluate_attempt, _evaluate(target, "t1", force=True))
    assert forced.graded and service.paths() == ["/evaluate-response/"] * 2


async def test_v1_reads_the_tenant_key_from_the_environment(
    service: ServiceServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    target = ServiceTarget(url=service.url, api="v1", payload_schema=SCHEMA, retry=RETRY)
    monkeypatch.setenv("BENCHMARK_API_KEY", BEARER)
    with pytest.raises(ApplicationError, match="VALS_AUTH_KEY") as refused:
        await env.run(acts.evaluate_attempt, _evaluate(target, "t1"))
    assert refused.value.type == ServiceAuthError.__name__ and refused.value.non_retryable
    monkeypatch.setenv("VALS_AUTH_KEY", KEY)
    out = await env.run(acts.evaluate_attempt, _evaluate(target, "t1"))
    score = await env.run(
        acts.score_run, ScoreRunInput(service=target, run_id="r1", lane="baseline")
    )
    assert out.status == "evaluated" and score.final_score == 0.25
    assert service.received[-1].headers["x-descope-api-key"] == KEY
    grade = TaskGrade.model_validate_json(Path(out.eval_path).read_text())
    assert grade.evaluator_version == "test-1.0" and grade.api == "v1"


async def test_a_long_retry_after_becomes_temporals_next_retry_delay(
    service: ServiceServer, settings: Settings
) -> None:
    service.faults.rate_limited, service.faults.retry_after = 1, "900"
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    target = ServiceTarget(url=service.url, retry=RETRY)
    with pytest.raises(ApplicationError) as err:
        await env.run(acts.evaluate_attempt, _evaluate(target, "t1"))
    assert err.value.type == "ServiceError" and not err.value.non_retryable
    assert err.value.next_retry_delay == timedelta(seconds=900)


async def test_an_unrecorded_attempt_says_what_to_check(
    service: ServiceServer, settings: Settings
) -> None:
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    with pytest.raises(ApplicationError, match="run the attempt first") as err:
        await env.run(acts.evaluate_attempt, _evaluate(ServiceTarget(url=service.url), "t3"))
    assert err.value.type == ConfigError.__name__
    assert service.received == []


async def test_keys_stay_out_of_payloads_files_and_logs(
    service: ServiceServer,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("VALS_AUTH_KEY", KEY)
    monkeypatch.setenv("BENCHMARK_API_KEY", BEARER)
    service.faults.server_errors = 1
    service.faults.reject, service.faults.echo_auth = 400, True
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    target = ServiceTarget(url=service.url, retry=RETRY)
    evaluate = _evaluate(target, "t1")
    score_in = ScoreRunInput(service=target, run_id="r1", lane="baseline")
    with structlog.testing.capture_logs() as logs:
        graded = await env.run(acts.evaluate_attempt, evaluate)
        service.faults.reject = None
        score = await env.run(acts.score_run, score_in)
    assert graded.status == "error" and service.received[0].headers["x-descope-api-key"] == KEY
    assert "[REDACTED]" in Path(graded.eval_path).read_text()
    payloads = pydantic_data_converter.payload_converter.to_payloads(
        [evaluate, graded, score_in, score]
    )
    files = [p.read_text() for p in Path(settings.runs_dir).rglob("*") if p.is_file()]
    out, errs = capfd.readouterr()
    assert logs, "the retry should have logged"
    for text in (*(p.data.decode() for p in payloads), *files, repr(logs), caplog.text, out, errs):
        assert KEY not in text and BEARER not in text


async def test_the_answer_can_come_from_a_file_of_the_attempt(
    service: ServiceServer, settings: Settings
) -> None:
    attempt = RunPaths.for_run(settings.runs_dir, "r1").attempt("t1", "baseline", 1)
    (attempt / "answer.txt").write_text("not 42")
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    from_file = ServiceTarget(url=service.url, response_file="answer.txt", retry=RETRY)
    out = await env.run(acts.evaluate_attempt, _evaluate(from_file, "t1"))
    assert out.pass_percentage == 0.0 and service.received[0].body["response"] == "not 42"
    outside = ServiceTarget(url=service.url, response_file="../../../../plan.json")
    with pytest.raises(ApplicationError, match="leaves the attempt directory") as err:
        await env.run(acts.evaluate_attempt, _evaluate(outside, "t1", force=True))
    assert err.value.type == ConfigError.__name__


async def test_an_artifact_is_uploaded_without_the_key_and_graded_by_its_key(
    service: ServiceServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VALS_AUTH_KEY", KEY)
    run = RunPaths.for_run(settings.runs_dir, "r1")
    (run.attempt("t1", "baseline", 1) / "submission.patch").write_text("42\n")
    _record(run, "t3", "completed", "x")  # finished, but left no patch
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    target = ServiceTarget(
        url=service.url,
        api="v1",
        dataset="validation",
        payload_schema=ARTIFACT_SCHEMA,
        payload_type="artifact",
        retry=RETRY,
    )
    out = await env.run(acts.evaluate_attempt, _evaluate(target, "t1"))
    assert (out.status, out.pass_percentage) == ("evaluated", 100.0)
    [put] = [r for r in service.received if r.method == "PUT"]
    assert put.body == b"42\n"
    assert not {"x-descope-api-key", "authorization"} & set(put.headers)  # storage sees no key
    [evaluate] = [r for r in service.received if r.path == "/v1/evaluate"]
    key = "tenant/validation/r1.baseline/t1/submission.patch"
    assert evaluate.body["payload"] == {"type": "artifact", "schema": ARTIFACT_SCHEMA, "data": key}
    assert service.artifacts == {key: b"42\n"}

    missing = await env.run(acts.evaluate_attempt, _evaluate(target, "t3"))
    assert missing.status == "error"
    stored = TaskGrade.model_validate_json(Path(missing.eval_path).read_text())
    assert stored.errors == ("the attempt left no submission.patch to upload as its artifact",)

    service.faults.max_artifact_bytes = 1
    too_big = await env.run(acts.evaluate_attempt, _evaluate(target, "t1", force=True))
    stored = TaskGrade.model_validate_json(Path(too_big.eval_path).read_text())
    assert too_big.status == "error" and "larger than the service accepts" in stored.errors[0]
    assert "sig=" not in stored.errors[0]  # a presigned URL's signature is never kept
    service.faults.max_artifact_bytes, service.faults.store_status = 1_000_000, 403
    expired = await env.run(acts.evaluate_attempt, _evaluate(target, "t1", force=True))
    stored = TaskGrade.model_validate_json(Path(expired.eval_path).read_text())
    assert expired.status == "error" and "upload URL expired" in stored.errors[0]
    assert "sig=" not in stored.errors[0]  # not even from the store's own error body
    with pytest.raises(ValueError, match="artifact payloads need the v1 API"):
        ServiceTarget(url=service.url, payload_type="artifact")
