"""Every file and field that feeds a published number is covered by ``starter audit``.

A run is written by hand as its workers and report activity write it (plan, run record,
attempts, gradings, final scores, results, reports, a dashboard entry), and its history
is the ledger those workers would leave. Each test edits what someone who wants a better
number would edit, and the audit must name the file.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from durabench.models.results import AttemptResult
from durabench.results.files import build_results
from durabench.service.records import TaskGrade, score_path
from durabench.service.wire import EvalResultData
from durabench.settings.paths import RunPaths
from tests.unit.finished_run import SCORES, audit, edit_json, grade_of, named, write_run


@pytest.mark.parametrize("service", [False, True])
def test_the_hand_run_audits_clean_against_its_ledger(tmp_path: Path, service: bool) -> None:
    run = write_run(tmp_path, service=service)
    report = audit(run)
    assert report.lines() == () and report.notes == ()
    assert audit(run, None).lines() == ()  # and on its files alone


# --- defect: a planted grading ----------------------------------------------------------


def test_a_grading_planted_in_a_run_no_service_graded_is_not_read_and_is_named(
    tmp_path: Path,
) -> None:
    run = write_run(tmp_path, service=False)
    attempt = run.paths.attempt("t2", "baseline", 1)  # model_timeout, reward 0.0
    planted = grade_of(AttemptResult.model_validate_json((attempt / "result.json").read_text()))
    planted = planted.model_copy(update={"result": EvalResultData(pass_percentage=100.0)})
    (attempt / "eval.json").write_text(planted.model_dump_json())
    rebuilt = build_results(run.paths, None, 1.0)
    reward = {(a.task_id, a.lane, a.attempt): a.reward for a in rebuilt.attempts}
    assert reward[("t2", "baseline", 1)] == 0.0  # the verifier's reward stands
    for ledger in (run.ledger, None):
        report = audit(run, ledger)
        assert (
            "[results] t2/baseline/attempt-1: eval.json in a run that no service graded (its "
            "plan asks for none): it was put there after the run, and it is not read"
        ) in report.lines()


def test_a_grading_the_history_does_not_record_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    attempt = run.paths.attempt("t2", "baseline", 1)
    grade = grade_of(AttemptResult.model_validate_json((attempt / "result.json").read_text()))
    better = grade.model_copy(update={"result": EvalResultData(pass_percentage=100.0)})
    (attempt / "eval.json").write_text(better.model_dump_json())
    lines = audit(run).lines()
    assert any(
        line.startswith("[ledger] t2/baseline/attempt-1: eval.json changed (sha256")
        for line in lines
    ), lines
    unrecorded = run.paths.attempt("t4", "sourcegraph_full", 1)  # infra: never graded
    (unrecorded / "eval.json").write_text(better.model_dump_json())
    assert (
        "[ledger] t4/sourcegraph_full/attempt-1: eval.json is a grading the run's history does "
        "not record: put there after the run, or graded again by `starter score`; the run's "
        "reward is not its"
    ) in audit(run).lines()


def test_a_planted_scale_of_zero_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    path = run.paths.attempt("t1", "baseline", 1) / "eval.json"
    edit_json(path, lambda d: d.update(scale=0))
    lines = audit(run).lines()
    assert any(
        line.startswith("[results] t1/baseline/attempt-1: eval.json is not a grading")
        for line in lines
    )
    assert TaskGrade.model_construct(scale=0.0, failed="", result=None).reward is None


# --- defect: a forged approval ----------------------------------------------------------


def test_an_approver_edited_into_results_json_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=False)
    edit_json(run.paths.results, lambda d: d["approval"].update(approver="the director"))
    for ledger in (run.ledger, None):
        lines = audit(run, ledger).lines()
        assert any(
            line.startswith(
                "[results] results.json: its approval is not the run's: approver "
                "('the director' in results.json, 'ann' in "
            )
            for line in lines
        ), lines
        assert "[results] report.md: does not follow from the attempts" not in lines  # unedited


def test_an_approver_edited_into_run_json_and_results_json_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=False)
    forged = datetime(2026, 2, 2, tzinfo=UTC).isoformat()
    for path in (run.paths.run, run.paths.results):
        edit_json(path, lambda d: d["approval"].update(approver="the director", approved_at=forged))
    md = run.paths.report_md.read_text().replace("approved by ann", "approved by the director")
    run.paths.report_md.write_text(md)
    lines = audit(run).lines()
    assert any(
        line.startswith("[ledger] run.json: its approval is not the one history recorded")
        for line in lines
    ), lines
    assert any(
        line.startswith("[results] results.json: its approval is not the run's") for line in lines
    )
    assert "[results] report.md: does not follow from the attempts" in lines


# --- done when: every file and field that feeds a published number ------------------------


def _results(change: Callable[[Any], None]) -> Callable[[RunPaths], None]:
    return lambda paths: edit_json(paths.results, change)


def _attempt_json(name: str, change: Callable[[Any], None]) -> Callable[[RunPaths], None]:
    return lambda paths: edit_json(paths.attempt("t1", "baseline", 1) / name, change)


def _text(relative: str, text: str) -> Callable[[RunPaths], None]:
    return lambda paths: (paths.root / relative).write_text(text)


def _plan(change: Callable[[Any], None]) -> Callable[[RunPaths], None]:
    return lambda paths: edit_json(paths.plan, change)


_CHEAP = {
    "input": 0.0,
    "output": 0.0,
    "cache_read": 0.0,
    "cache_write": 0.0,
    "source": "an edit after the run",
    "as_of": "2026-01-01",
}
"""A price written into a run's plan after the run, to make its costs look smaller."""


def _drop_task(d: Any) -> None:
    d["tasks"] = d["tasks"][:-1]
    d["task_count"] -= 1


A1 = "tasks/t1/baseline/attempt-1"
EDITS: dict[str, tuple[str, Callable[[RunPaths], None]]] = {
    "result.json reward": (
        "result.json",
        _attempt_json("result.json", lambda d: d.update(reward=0.5)),
    ),
    "result.json exit_class": (
        "result.json",
        _attempt_json("result.json", lambda d: d.update(exit_class="infra_other")),
    ),
    "result.json tokens": (
        "result.json",
        _attempt_json("result.json", lambda d: d["tokens"].update(input=1)),
    ),
    "result.json cost_usd": (
        "result.json",
        _attempt_json("result.json", lambda d: d.update(cost_usd=0.01)),
    ),
    "result.json served_model": (
        "result.json",
        _attempt_json("result.json", lambda d: d.update(served_model="other")),
    ),
    "result.json cli_version": (
        "result.json",
        _attempt_json("result.json", lambda d: d.update(cli_version="9.9.9")),
    ),
    "reward.txt": ("verifier/reward.txt", _text(f"{A1}/verifier/reward.txt", "0.5\n")),
    "stdout.txt": ("agent/stdout.txt", _text(f"{A1}/agent/stdout.txt", "{}\n")),
    "submission.patch": ("submission.patch", _text(f"{A1}/submission.patch", "")),
    "eval.json pass_percentage": (
        "eval.json",
        _attempt_json("eval.json", lambda d: d["result"].update(pass_percentage=50.0)),
    ),
    "eval.json scale": ("eval.json", _attempt_json("eval.json", lambda d: d.update(scale=50.0))),
    "eval.json status": (
        "eval.json",
        _attempt_json("eval.json", lambda d: d.update(status="error")),
    ),
    "final_score": (
        "final_score.baseline.json",
        lambda p: edit_json(score_path(p, "baseline"), lambda d: d.update(final_score=0.99)),
    ),
    # 0.6 -> 0.604: an edit under 0.005 that rounds to the same two places.
    "final_score by less than 0.005": (
        "final_score.baseline.json",
        lambda p: edit_json(score_path(p, "baseline"), lambda d: d.update(final_score=0.604)),
    ),
    "plan.json tasks": ("plan.json", _plan(_drop_task)),
    "plan.json lanes": (
        "plan.json",
        _plan(lambda d: d.update(lanes=["sourcegraph_full", "baseline"])),
    ),
    "plan.json model": ("plan.json", _plan(lambda d: d["request"]["agent"].update(model="m2"))),
    "plan.json prices": (
        "plan.json",
        _plan(lambda d: d["prices"]["prices"].update(anthropic={"m": _CHEAP})),
    ),
    "plan.json category": ("plan.json", _plan(lambda d: d["request"].update(category="official"))),
    "plan.json service": ("plan.json", _plan(lambda d: d["request"].update(service=None))),
    "run.json approver": (
        "run.json",
        lambda p: edit_json(p.run, lambda d: d["approval"].update(approver="x")),
    ),
    "run.json approved_at": (
        "run.json",
        lambda p: edit_json(
            p.run, lambda d: d["approval"].update(approved_at="2020-01-01T00:00:00Z")
        ),
    ),
    "results.json lane mean": (
        "results.json",
        _results(lambda d: d["lanes"][0].update(mean_reward=0.42)),
    ),
    "results.json mean_delta": (
        "results.json",
        _results(lambda d: d["scorecard"]["comparison"].update(mean_delta=0.9)),
    ),
    "results.json cost": (
        "results.json",
        _results(lambda d: d["scorecard"]["totals"][-1].update(cost_usd=0.01)),
    ),
    "results.json attempt reward": (
        "results.json",
        _results(lambda d: d["attempts"][2].update(reward=1.0)),
    ),
    "results.json excluded": ("results.json", _results(lambda d: d.update(excluded={}))),
    "results.json service_scores": (
        "results.json",
        _results(lambda d: d.update(service_scores={"baseline": 1.0})),
    ),
    "results.json service_scores by less than 0.005": (
        "results.json",
        _results(lambda d: d.update(service_scores={**SCORES, "baseline": 0.604})),
    ),
    "results.json approver": (
        "results.json",
        _results(lambda d: d["approval"].update(approver="x")),
    ),
    "report.md": (
        "report.md",
        lambda p: p.report_md.write_text(p.report_md.read_text().replace("0.", "1.")),
    ),
    "report.html": ("report.html", lambda p: p.report_html.write_text("<p>all pass</p>")),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_edit_of_what_feeds_a_published_number_is_named(tmp_path: Path, edit: str) -> None:
    run = write_run(tmp_path, service=True)
    name, change = EDITS[edit]
    change(run.paths)
    report = audit(run)
    assert named(report, name), report.lines()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("mean_delta", 0.9),
        ("cost_usd", 0.01),
        ("cost_delta_usd", -0.5),
        ("lanes", {"baseline": 1.0}),
    ],
)
def test_every_edit_of_the_dashboard_entry_is_named(tmp_path: Path, field: str, value: Any) -> None:
    run = write_run(tmp_path, service=True)
    edit_json(run.board, lambda d: d["runs"][0].update({field: value}))
    assert named(audit(run), "dashboard.json")


def test_a_final_score_edited_by_less_than_a_rounding_is_named_as_a_score(tmp_path: Path) -> None:
    """The history recorded the baseline's final score as 0.6; the file now says 0.604. The
    manifest names the file's bytes; the score check must name the number itself, to the
    last digit (a comparison to two places would pass it)."""
    run = write_run(tmp_path, service=True)
    edit_json(score_path(run.paths, "baseline"), lambda d: d.update(final_score=0.604))
    messages = [f.message for f in audit(run).findings]
    assert any("says 0.604" in m and "recorded is 0.6 " in m for m in messages), messages
