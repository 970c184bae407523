"""A second copy of an entry in ``results.json`` is named, not collapsed into the first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from durabench.errors import ConfigError
from durabench.results.dashboard import publish
from tests.unit.finished_run import RUN, audit, edit_json, write_run


@pytest.mark.parametrize(
    "where", ["t1/baseline/attempt-1", "t4/sourcegraph_full/attempt-1", "t3/baseline/attempt-1"]
)
def test_a_duplicate_attempt_in_results_json_is_named(tmp_path: Path, where: str) -> None:
    """Defect 4 of issue 47: the audit indexed attempts by key, so a copy collapsed (an
    infra attempt's copy changes no Best/Mean, so nothing else named it)."""
    run = write_run(tmp_path, service=False)

    def twice(data: Any) -> None:
        (first,) = (
            a
            for a in data["attempts"]
            if f"{a['task_id']}/{a['lane']}/attempt-{a['attempt']}" == where
        )
        data["attempts"].append(first)

    edit_json(run.paths.results, twice)
    for ledger in (run.ledger, None):
        report = audit(run, ledger)
        assert (
            f"[results] results.json: lists {where} 2 times: a copy was added after the run"
        ) in report.lines(), report.lines()
        with pytest.raises(ConfigError, match="is not published"):
            publish(run.paths.root.parent, tmp_path / "board.json", RUN, report)


def test_a_second_dashboard_entry_of_the_run_is_named(tmp_path: Path) -> None:
    """The family of defect 4: the audit read the run's first entry of the dashboard only."""
    run = write_run(tmp_path, service=False)

    def forged_copy(data: Any) -> None:
        data["runs"].append({**data["runs"][0], "mean_delta": 0.9})

    edit_json(run.board, forged_copy)
    lines = audit(run).lines()
    board = str(run.board)
    assert (
        f"[results] {board}: lists the run 2 times: a copy was added after it was published"
        in lines
    )
    assert any(
        line.startswith(f"[results] {board}: the run's entry differs in mean_delta")
        for line in lines
    )
