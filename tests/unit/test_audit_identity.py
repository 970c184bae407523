"""Every file that says which run (task, lane, attempt) it is, is held to where it lies.

Issue 47 defect 3 and its family: an id a file states is never taken over the run asked
for; a file that names another run or attempt is named, with history and without.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from durabench.service.records import score_path
from tests.unit.finished_run import audit, edit_json, write_run

RENAMED = "official-run-2025"


def _rename(data: Any) -> None:
    request = data["plan"]["request"] if "plan" in data else data["request"]
    request["run_id"] = RENAMED


def test_a_run_id_changed_in_plan_and_run_json_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=False)
    for path in (run.paths.plan, run.paths.run, run.paths.results):
        edit_json(path, _rename)
    for ledger in (run.ledger, None):
        lines = audit(run, ledger).lines()
        for name in ("plan.json", "run.json", "results.json"):
            assert (
                f"[results] {name}: names run {RENAMED}, but it is run hand's (its directory, "
                "and the history audited): the id was changed after the run"
            ) in lines, lines


def test_a_grading_copied_from_another_attempt_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    passed = run.paths.attempt("t1", "baseline", 1) / "eval.json"
    shutil.copyfile(passed, run.paths.attempt("t2", "baseline", 1) / "eval.json")
    lines = audit(run, None).lines()
    assert (
        "[results] t2/baseline/attempt-1: eval.json is run hand's t1/baseline/attempt-1: it "
        "was copied here from another attempt"
    ) in lines, lines


def test_a_final_score_copied_from_another_lane_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    shutil.copyfile(score_path(run.paths, "baseline"), score_path(run.paths, "sourcegraph_full"))
    lines = audit(run, None).lines()
    assert (
        "[results] final_score.sourcegraph_full.json: is run hand's final score of lane "
        "baseline: it was copied here"
    ) in lines, lines
