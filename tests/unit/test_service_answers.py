"""What a service grades and how its answer is read: the whole answer, no answer, scales.

Against the loopback service (``tests/service_server.py``), which answers from the
protocol's JSON; the run directory is recorded by hand, as a finished run leaves it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.grading import ServiceActivities
from durabench.models.results import AttemptResult
from durabench.models.run import RunPlan, RunRequest, TaskRef
from durabench.models.verdict import ExitClass
from durabench.results.files import with_service_grade
from durabench.service import EvaluateAttemptInput, ServiceRetry, ServiceTarget, TaskGrade
from durabench.settings.paths import FINAL_MESSAGE, RunPaths
from durabench.settings.values import Settings
from starter.console import result_tables
from starter.score import score_main
from tests.service_server import ServiceServer

RETRY = ServiceRetry(max_attempts=2, backoff_s=0, conflict_wait_s=0)
LONG = "".join(f"line {i:04d} of a long answer\n" for i in range(120))  # 3,000+ characters


async def _no_sleep(seconds: float) -> None:
    return None


@pytest.fixture
def service() -> Iterator[ServiceServer]:
    with ServiceServer({"t1": "42", "t2": "7", "t3": LONG.strip()}) as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("VALS_AUTH_KEY", raising=False)
    monkeypatch.delenv("BENCHMARK_API_KEY", raising=False)
    return Settings(home=tmp_path / "home")


def _run(settings: Settings, target: ServiceTarget, *tasks: str) -> RunPaths:
    run = RunPaths.for_run(settings.runs_dir, "r1")
    refs = tuple(TaskRef(task_id=t, task_dir=f"/tasks/{t}") for t in tasks)
    plan = RunPlan(
        request=RunRequest(run_id="r1", suite="svc", service=target),
        lanes=("baseline",),
        tasks=refs,
        task_count=len(refs),
        estimated_agent_hours=0.1,
        results_dir=str(run.root),
    )
    run.root.mkdir(parents=True)
    run.plan.write_text(plan.model_dump_json())
    return run


def _record(
    run: RunPaths, task_id: str, answer: str | None, exit_class: ExitClass = "completed"
) -> Path:
    """An attempt as the worker leaves it: a display copy in result.json, the whole beside."""
    attempt = run.attempt(task_id, "baseline", 1)
    attempt.mkdir(parents=True)
    result = AttemptResult(
        run_id="r1",
        task_id=task_id,
        lane="baseline",
        attempt=1,
        exit_class=exit_class,
        reason="ended on its own without changing a file",
        agent="claude-code",
        model="m",
        last_message=(answer or "")[:2000],
    )
    (attempt / "result.json").write_text(result.model_dump_json())
    if answer is not None:
        (attempt / FINAL_MESSAGE).write_text(answer)
    return attempt / "result.json"


def _input(target: ServiceTarget, task_id: str) -> EvaluateAttemptInput:
    return EvaluateAttemptInput(service=target, run_id="r1", task_id=task_id, lane="baseline")


async def _grade(settings: Settings, target: ServiceTarget, task_id: str) -> TaskGrade:
    acts = ServiceActivities(settings, sleep=_no_sleep)
    out = await ActivityEnvironment().run(acts.evaluate_attempt, _input(target, task_id))
    return TaskGrade.model_validate_json(Path(out.eval_path).read_text())


def _reward(run: RunPaths, task_id: str) -> AttemptResult:
    path = run.attempt(task_id, "baseline", 1) / "result.json"
    a = AttemptResult.model_validate_json(path.read_text())
    return with_service_grade(path, a, service=True)


async def test_the_whole_final_message_is_graded_not_its_display_copy(
    service: ServiceServer, settings: Settings
) -> None:
    target = ServiceTarget(url=service.url, retry=RETRY)
    run = _run(settings, target, "t3")
    _record(run, "t3", LONG)
    graded = await _grade(settings, target, "t3")
    assert len(service.received[0].body["response"]) == len(LONG) > 3000
    assert graded.reward == 1.0


async def test_an_attempt_without_an_answer_is_recorded_as_such_and_not_sent(
    service: ServiceServer, settings: Settings
) -> None:
    target = ServiceTarget(url=service.url, retry=RETRY)
    run = _run(settings, target, "t1", "t2")
    _record(run, "t1", None)  # an oracle or nop: no final message at all
    graded = await _grade(settings, target, "t1")
    assert service.received == []
    assert graded.status == "error" and graded.note.startswith("no answer")
    assert "no answer: the attempt left no final message" in _reward(run, "t1").verifier_error
    from_file = target.model_copy(update={"response_file": "answer.txt"})
    _record(run, "t2", "7")
    assert (await _grade(settings, from_file, "t2")).note.startswith(
        "no answer: the attempt left no answer.txt"
    )


async def test_the_scale_comes_from_the_result_else_the_option_and_is_enforced(
    service: ServiceServer, settings: Settings
) -> None:
    target = ServiceTarget(url=service.url, retry=RETRY)
    run = _run(settings, target, "t1")
    _record(run, "t1", "42")
    service.faults.fraction = service.faults.says_scale = True  # 0-1, and says so
    assert (await _grade(settings, target, "t1")).reward == 1.0
    assert _reward(run, "t1").reward == 1.0

    service.faults.says_scale = False  # 0-1 without a word: --service-scale 1
    on_one = target.model_copy(update={"scale": 1.0})
    forced = on_one.model_copy()
    acts, env = ServiceActivities(settings, sleep=_no_sleep), ActivityEnvironment()
    data = _input(forced, "t1").model_copy(update={"force": True})
    await env.run(acts.evaluate_attempt, data)
    assert _reward(run, "t1").reward == 1.0

    service.faults.fraction = False  # 0-100, read as 0-1: refused, and the report says why
    await env.run(acts.evaluate_attempt, data)
    attempt = _reward(run, "t1")
    assert attempt.reward is None
    assert "pass_percentage 100 is outside the scale 0 to 1" in attempt.verifier_error
    with pytest.raises(ValueError, match="greater than 0"):
        ServiceTarget(url=service.url, scale=0)


async def test_one_bad_grading_never_stops_the_others_and_the_report_says_what_happened(
    service: ServiceServer, settings: Settings
) -> None:
    target = ServiceTarget(url=service.url, retry=RETRY)
    run = _run(settings, target, "t1", "t2", "t3")
    _record(run, "t1", "42")
    _record(run, "t2", "7")
    _record(run, "t3", "wrong")
    service.faults.server_errors = RETRY.max_attempts  # t1: the service stays down
    service.faults.no_percentage = {"t2"}  # t2: graded, no pass_percentage (allowed)
    result = await score_main("r1", settings=settings)
    assert service.paths().count("/evaluate-response/") == RETRY.max_attempts + 2
    assert result.service_scores == {"baseline": 0.0}
    report = run.report_md.read_text()
    assert "service grading failed: POST" in report and "grading sandbox unavailable" in report
    assert "service graded evaluated: the service sent no pass_percentage" in report
    assert "without changing a file" not in report.split("## Last messages")[0]
    labelled = "service final score, baseline: 0 (the service's own number, on its scale"
    assert labelled in report
    assert any(labelled in str(line) for line in result_tables(result))  # the terminal too
    assert "calls: legacy API: grades by POST /evaluate-response/" in report
    stored = TaskGrade.model_validate_json(
        (run.attempt("t1", "baseline", 1) / "eval.json").read_text()
    )
    assert stored.failed

    graded = service.paths().count("/evaluate-response/")
    again = await score_main("r1", settings=settings)  # the failed one only is graded again
    assert service.paths().count("/evaluate-response/") == graded + 1
    assert {a.task_id: a.reward for a in again.attempts} == {"t1": 1.0, "t2": None, "t3": 0.0}


async def test_a_result_is_sent_back_to_the_final_score_as_the_service_gave_it(
    service: ServiceServer, settings: Settings
) -> None:
    target = ServiceTarget(url=service.url, retry=RETRY)
    run = _run(settings, target, "t2")
    _record(run, "t2", "7")
    service.faults.no_percentage = {"t2"}
    await score_main("r1", settings=settings)
    [sent] = [r.body for r in service.received if r.path == "/final-score/"]
    assert sent["evaluation_results"]["t2"]["result"] == {
        "eval_version": "test-1",
        "grader": "exact",
    }


async def test_starter_score_reads_gradings_again_on_the_scale_it_is_given(
    service: ServiceServer, settings: Settings
) -> None:
    service.faults.fraction = True  # 0-1 without a word: read as 0-100, a reward of 0.01
    target = ServiceTarget(url=service.url, retry=RETRY)
    run = _run(settings, target, "t1")
    _record(run, "t1", "42")
    assert {a.reward for a in (await score_main("r1", settings=settings)).attempts} == {0.01}
    again = await score_main("r1", force=True, scale=1.0, settings=settings)
    assert {a.reward for a in again.attempts} == {1.0}
    plan = RunPlan.model_validate_json(run.plan.read_text())
    assert plan.request.service is not None and plan.request.service.scale == 1.0
