"""``starter run``'s exit status says whether anything was measured.

A run that completes with every pair excluded measured nothing: scripts and CI must see a
failure (a status of its own, ``NOTHING_MEASURED_EXIT``), not a success.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import starter.run
from durabench.models.results import RunResult
from durabench.models.suite_run import RunOutcome
from starter.run import NOTHING_MEASURED_EXIT, run
from tests.unit.results_set import hand_result


def _run_ending_with(
    result: RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    results_dir = tmp_path / "runs" / "hand"
    results_dir.mkdir(parents=True)
    (results_dir / "results.json").write_text(result.model_dump_json())

    async def finished(*args: Any, **kwargs: Any) -> RunOutcome:
        return RunOutcome(run_id="hand", status="completed", results_dir=str(results_dir))

    monkeypatch.setattr(starter.run, "main", finished)
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    out = CliRunner().invoke(run, ["--suite", "pytorch", "--yes"])
    return out.exit_code, out.output


def test_a_run_where_every_pair_was_excluded_exits_with_its_own_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = hand_result()
    everything = dict.fromkeys((t.task_id for t in result.plan.tasks), "infra")
    code, said = _run_ending_with(
        result.model_copy(update={"excluded": everything}), tmp_path, monkeypatch
    )
    assert NOTHING_MEASURED_EXIT not in (0, 1, 2)  # not success, an error or a usage error
    assert code == NOTHING_MEASURED_EXIT
    assert "Nothing was measured" in said and "--rerun infra --from hand" in said


def test_a_run_that_measured_something_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, said = _run_ending_with(hand_result(), tmp_path, monkeypatch)  # 1 of 5 excluded
    assert (code, said) == (0, "")
