"""The audit's checks on a run directory written by hand (no server: history as a Ledger)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from durabench.atomic import atomic_write
from durabench.audit import audit_run, digest_attempt
from durabench.errors import ConfigError
from durabench.models.audit import AuditReport, Ledger, LedgerAttempt
from durabench.models.results import AttemptResult
from durabench.models.suite_run import RecordRunInput
from durabench.results.files import build_results, write_reports
from durabench.settings.paths import RunPaths
from tests.unit.results_set import attempt, hand_result

RUN = "hand"


def _write(runs: Path, attempts: tuple[AttemptResult, ...]) -> RunPaths:
    """A finished run of the hand-worked set: plan, attempt files, results and reports."""
    paths = RunPaths.for_run(runs, RUN)
    result = hand_result()
    atomic_write(paths.plan, result.plan.model_dump_json())
    assert result.approval is not None
    record = RecordRunInput(plan=result.plan.summary(), approval=result.approval)
    atomic_write(paths.run, record.model_dump_json())
    for a in attempts:
        where = paths.attempt(a.task_id, a.lane, a.attempt) / "result.json"
        atomic_write(where, a.model_dump_json())
    write_reports(paths, build_results(paths, result.approval, 1.0))
    return paths


def _versioned(a: AttemptResult, **update: Any) -> AttemptResult:
    return a.model_copy(update={"classifier_version": 3, "durabench_version": "0.1.0", **update})


RETRIED = {"t3_baseline_1": {"exit_class": "infra_rate_limit", "reward": None}}
"""The hand set's t3 baseline ran again after a scored attempt; a pair retries infra only."""


def _attempts(**changes: dict[str, Any]) -> tuple[AttemptResult, ...]:
    """The hand set, versioned; ``changes`` keyed ``task_lane_n`` update one attempt."""
    changes = {**RETRIED, **changes}
    out = []
    for a in hand_result().attempts:
        out.append(_versioned(a, **changes.get(f"{a.task_id}_{a.lane}_{a.attempt}", {})))
    return tuple(out)


def _audit(runs: Path, ledger: Ledger | None = None) -> AuditReport:
    return audit_run(runs, RUN, ledger, skipped="" if ledger else "no server in a unit test")


def test_the_hand_worked_run_audits_clean_on_its_files(tmp_path: Path) -> None:
    _write(tmp_path, _attempts())
    report = _audit(tmp_path)
    assert report.clean and report.lines() == ()
    assert report.notes == (
        "ledger check skipped: no server in a unit test; only the files were checked",
    )


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            {"t1_baseline_1": {"model": "m-2"}},
            "[served_model] t1/baseline/attempt-1: requested m-2, but the run's plan asks for m",
        ),
        (
            {"t2_sourcegraph_full_1": {"reward": None}},
            "[exit_class] t2/sourcegraph_full/attempt-1: completed without a verifier result: "
            "no reward and no verifier error recorded",
        ),
        (
            {"t2_baseline_1": {"classifier_version": None}},
            "[versions] t2/baseline/attempt-1: ended model_timeout with no classifier version "
            "recorded",
        ),
        (
            {"t1_sourcegraph_full_1": {"durabench_version": None}},
            "[versions] t1/sourcegraph_full/attempt-1: result.json records no durabench "
            "version: it was written before versions were recorded, or not by a worker",
        ),
    ],
)
def test_each_attempt_check_names_what_does_not_hold(
    tmp_path: Path, change: dict[str, dict[str, Any]], line: str
) -> None:
    _write(tmp_path, _attempts(**change))
    assert _audit(tmp_path).lines() == (line,)


def test_a_marked_model_mismatch_is_no_finding(tmp_path: Path) -> None:
    swapped = {
        "exit_class": "infra_other",
        "reward": None,
        "served_model": "other-model",
        "reason": "MODEL MISMATCH: requested m, served other-model",
    }
    _write(tmp_path, _attempts(t4_baseline_1=swapped))
    assert _audit(tmp_path).lines() == ()


def test_pairs_need_every_planned_lane_and_attempts_in_order(tmp_path: Path) -> None:
    attempts = _attempts(t3_baseline_1={})  # as the hand set has it
    keep = [a for a in attempts if (a.task_id, a.lane) != ("t2", "baseline")]
    extra = _versioned(attempt("t9", "baseline", 1, "completed", 1.0))
    paths = _write(tmp_path, (*keep, extra))
    # t3's baseline ran 1 (completed) then 2: a second attempt after one that counted.
    assert _audit(tmp_path).lines()[:3] == (
        "[pairs] t2/baseline: no attempt of this planned lane ended: its attempts were "
        "deleted, or the run did not finish",
        "[pairs] t3/baseline/attempt-1: ended completed, yet attempt 2 follows: only infra "
        "attempts are tried again (an attempt added after the fact?)",
        "[pairs] t9/baseline/attempt-1: the run's plan has no such task and lane: an attempt "
        "added after the fact",
    )
    moved = paths.attempt("t4", "sourcegraph_full", 3)
    paths.attempt("t4", "sourcegraph_full", 2).rename(moved)
    assert (
        "[pairs] t4/sourcegraph_full/attempt-2: missing, yet attempt 3 exists: its "
        "directory was deleted" in _audit(tmp_path).lines()
    )


def test_an_infra_attempt_counted_in_best_mean_is_named(tmp_path: Path) -> None:
    paths = _write(tmp_path, _attempts())
    results = json.loads(paths.results.read_text())
    for cell in results["scorecard"]["cells"]:
        if (cell["task_id"], cell["lane"]) == ("t4", "sourcegraph_full"):
            cell.update(included=1, best=0.0, mean=0.0, missing_reason="")
    paths.results.write_text(json.dumps(results))
    assert _audit(tmp_path).lines() == (
        "[results] results.json: Best/Mean of t4/sourcegraph_full counts 1 attempt(s), but "
        "only 0 of them are scored model data points (an infra or unscored attempt is "
        "counted)",
        "[results] results.json: field scorecard does not follow from the attempts",
    )


def test_results_without_a_durabench_version_are_named(tmp_path: Path) -> None:
    paths = _write(tmp_path, _attempts())
    results = json.loads(paths.results.read_text())
    results.pop("durabench_version")
    paths.results.write_text(json.dumps(results, indent=2))
    assert _audit(tmp_path).lines() == (
        "[versions] results.json: records no durabench version: built before versions were "
        "recorded, or not by durabench",
    )


def _ledger(paths: RunPaths, old: str = "", cancelled: str = "") -> Ledger:
    """History as the worker left it: each attempt recorded with its digest; ``old`` from
    before digests, ``cancelled`` never recorded (``task/lane/attempt-n``)."""
    entries = []
    for path in paths.attempt_results():
        a = AttemptResult.model_validate_json(path.read_text())
        at = f"{a.task_id}/{a.lane}/attempt-{a.attempt}"
        entries.append(
            LedgerAttempt(
                task_id=a.task_id,
                lane=a.lane,
                attempt=a.attempt,
                ended="cancelled" if at == cancelled else "completed",
                recorded=at != cancelled,
                digest=None if at in (old, cancelled) else digest_attempt(path.parent),
            )
        )
    return Ledger(run_ended="completed", attempts=tuple(entries))


def test_the_ledger_tells_old_histories_from_unrecorded_files(tmp_path: Path) -> None:
    paths = _write(tmp_path, _attempts())
    ledger = _ledger(paths)
    assert _audit(tmp_path, ledger).lines() == ()
    report = _audit(tmp_path, _ledger(paths, "t1/baseline/attempt-1", "t2/baseline/attempt-1"))
    assert report.lines() == (
        "[ledger] t2/baseline/attempt-1: its workflow ended cancelled and nothing recorded "
        "it, yet result.json exists: it was written after the fact",
    )
    assert report.notes == (
        "t1/baseline/attempt-1: its history predates digests; its files were not checked",
    )
    running = ledger.model_copy(update={"run_ended": "running"})
    assert _audit(tmp_path, running).lines() == (
        "[pairs] run: the run's workflow is running, not completed: audit a run that finished",
    )


def test_a_digested_file_added_after_the_attempt_was_recorded_is_named(tmp_path: Path) -> None:
    """t1's baseline wrote no reward.txt, so its digest holds None for it; one there now
    was put there after the attempt was recorded (a reward someone supplied)."""
    paths = _write(tmp_path, _attempts())
    ledger = _ledger(paths)
    assert ledger.attempts[0].digest is not None
    assert ledger.attempts[0].digest.files["verifier/reward.txt"] is None
    added = paths.attempt("t1", "baseline", 1) / "verifier" / "reward.txt"
    added.parent.mkdir()
    added.write_text("1\n")
    assert _audit(tmp_path, ledger).lines() == (
        "[ledger] t1/baseline/attempt-1: verifier/reward.txt was added after the attempt was "
        "recorded",
    )


def test_a_model_mismatch_counted_in_the_scores_fails_an_audit_without_history(
    tmp_path: Path,
) -> None:
    """Marked MODEL MISMATCH in its reason, but left ``completed`` with reward 1.0: it is
    counted in t1's Best/Mean, so the mark does not keep it out; the files alone show it."""
    counted = {
        "served_model": "other-model",
        "reason": "MODEL MISMATCH: requested m, served other-model",
    }
    _write(tmp_path, _attempts(t1_baseline_1=counted))
    assert _audit(tmp_path).lines() == (
        "[served_model] t1/baseline/attempt-1: served other-model for requested m, and the "
        "attempt is not marked MODEL MISMATCH and kept out of the scores",
    )


def test_damaged_files_are_findings_not_crashes(tmp_path: Path) -> None:
    paths = _write(tmp_path, _attempts())
    (paths.attempt("t1", "baseline", 1) / "result.json").write_text("{not json")
    (paths.attempt("t2", "baseline", 1) / "eval.json").write_text("[]")
    lines = _audit(tmp_path).lines()
    assert lines[0].startswith("[results] t1/baseline/attempt-1: result.json is not an attempt ")
    assert lines[0].endswith(": restore it or remove the attempt")
    assert lines[1].startswith(  # the hand set asked for no service: any eval.json is planted
        "[results] t2/baseline/attempt-1: eval.json in a run that no service graded"
    )
    paths.plan.write_text("{}")
    with pytest.raises(ConfigError, match="plan.json of run hand is not a plan"):
        _audit(tmp_path)


def test_the_audit_rebuilds_the_numbers_worked_by_hand(tmp_path: Path) -> None:
    """``results.json`` holds the hand set's stated lanes and scorecard (results_set.py),
    not a rebuild: the audit's own rebuild from the attempt files must equal them.

    A scoring or lane-summary mistake (an excluded pair in a lane's mean: baseline 0.6
    would read 0.667) makes the rebuild differ from the stated numbers, a finding.
    """
    hand = hand_result()
    attempts = tuple(_versioned(a) for a in hand.attempts)
    paths = _write(tmp_path, attempts)
    rebuilt = json.loads(paths.results.read_text())
    stored = hand.model_copy(
        update={"attempts": attempts, "durabench_version": rebuilt["durabench_version"]}
    )
    write_reports(paths, stored)
    lines = _audit(tmp_path).lines()
    assert [line for line in lines if line.startswith("[results] results.json")] == []
    assert lines == (
        "[pairs] t3/baseline/attempt-1: ended completed, yet attempt 2 follows: only infra "
        "attempts are tried again (an attempt added after the fact?)",
    )
