"""Every file a run publishes is held to the manifest its history recorded when written.

Issue 47 defects 5 and 6: plan.json's tasks and counterparts, and the files a reader sees
but no number is read from (trajectory, verifier output, final message, build log,
instruction), were edited with a clean audit, since history held hashes of four files only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from durabench.errors import ConfigError
from durabench.results.dashboard import publish
from tests.unit.finished_run import READ_BY_PEOPLE, RUN, Run, audit, edit_json, write_run

A1 = "t1/baseline/attempt-1"


def _refused(run: Run, tmp_path: Path, lines: tuple[str, ...]) -> None:
    """The audit names ``lines`` (among others), and publish refuses the run."""
    report = audit(run)
    assert set(lines) <= set(report.lines()), report.lines()
    with pytest.raises(ConfigError, match="is not published"):
        publish(run.paths.root.parent, tmp_path / "board.json", RUN, report)


def _plan_edit(data: Any, field: str) -> None:
    task = data["tasks"][0]
    if field == "counterparts":
        data["counterparts"] = [{"task_id": task["task_id"], "run_id": "official-run-2025"}]
    elif field == "task_dir":
        task["task_dir"] = "/elsewhere/t1"
    else:
        task[field] = 1e9


@pytest.mark.parametrize(
    "field", ["counterparts", "task_dir", "agent_timeout_sec", "verifier_timeout_sec"]
)
def test_an_edit_of_the_plan_history_keeps_no_summary_of_is_named(
    tmp_path: Path, field: str
) -> None:
    run = write_run(tmp_path, service=False)
    before = run.paths.plan.stat().st_size
    edit_json(run.paths.plan, lambda d: _plan_edit(d, field))
    lines = audit(run).lines()
    (line,) = (line for line in lines if line.startswith("[ledger] plan.json: "))
    assert line.startswith(f"[ledger] plan.json: changed ({before:,} bytes, sha256 "), line
    assert line.endswith(" now) after the run's report was written"), line
    # results.json holds the plan too: rebuilt from plan.json, it differs as well.
    _refused(
        run,
        tmp_path,
        (line, "[results] results.json: field plan does not follow from the attempts"),
    )


@pytest.mark.parametrize("name", sorted(READ_BY_PEOPLE))
def test_an_edit_of_a_file_no_number_is_read_from_is_named(tmp_path: Path, name: str) -> None:
    run = write_run(tmp_path, service=False)
    path = run.paths.attempt("t1", "baseline", 1) / name
    path.write_text("FORGED: 0 passed, 57 failed\n")
    (line,) = audit(run).lines()
    assert line.startswith(f"[ledger] {A1}: {name} changed ("), line
    assert line.endswith(" now) after the attempt was recorded"), line
    _refused(run, tmp_path, (line,))


def test_a_file_deleted_or_added_in_an_attempt_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=False)
    attempt = run.paths.attempt("t1", "baseline", 1)
    (attempt / "build.log").unlink()
    (attempt / "verifier" / "extra.txt").write_text("all pass\n")
    (attempt / "agent" / "link").symlink_to(attempt / "result.json")
    _refused(
        run,
        tmp_path,
        (
            f"[ledger] {A1}: agent/link was added after the attempt was recorded",
            f"[ledger] {A1}: build.log was deleted after the attempt was recorded",
            f"[ledger] {A1}: verifier/extra.txt was added after the attempt was recorded",
        ),
    )


def test_a_run_file_deleted_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    (run.paths.root / "final_score.sourcegraph_full.json").unlink()
    lines = audit(run).lines()
    assert (
        "[ledger] final_score.sourcegraph_full.json: was deleted after the run's report was written"
    ) in lines, lines
