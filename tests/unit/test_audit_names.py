"""Names under a run: one strict pattern for attempt directories, everything else named.

An attempt directory is ``attempt-<n>``, n an ASCII decimal from 1 without leading zeros.
A name that is almost one (``attempt-x``, ``attempt-01``, ``attempt-²``) was never written by
a worker: the rebuild must not read it into the numbers, and the audit must name it, not
skip it (nor crash on it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.models.results import AttemptResult
from durabench.results.dashboard import publish
from durabench.results.files import build_results, write_reports
from durabench.results.viewer import ViewerSite
from durabench.settings.paths import RunPaths, attempt_number
from tests.unit.finished_run import RUN, Run, audit, write_run


def _plant(run: Run, alias: str, reward: float = 0.0) -> None:
    """A copy of t1's baseline attempt 1 (reward 1.0) as ``alias``, lowered, then results
    rebuilt as an attacker with the code at hand would."""
    source = run.paths.attempt("t1", "baseline", 1)
    planted = source.parent / alias
    shutil.copytree(source, planted)
    result = AttemptResult.model_validate_json((planted / "result.json").read_text())
    (planted / "result.json").write_text(
        result.model_copy(update={"reward": reward}).model_dump_json()
    )
    approval = build_results(run.paths, None, 1.0).approval
    write_reports(run.paths, build_results(run.paths, approval, 1.0))


def _t1_baseline_mean(paths: RunPaths) -> float | None:
    card = build_results(paths, None, 1.0).scorecard
    assert card is not None
    (cell,) = (c for c in card.cells if (c.task_id, c.lane) == ("t1", "baseline"))
    return cell.mean


@pytest.mark.parametrize("alias", ["attempt-x", "attempt-01", "attempt-²", "attempt-0", "attempt-"])
def test_an_alias_attempt_directory_is_not_read_and_is_named(tmp_path: Path, alias: str) -> None:
    """Defects 1, 2 and 7 of issue 47: the mean stays 1.0, the audit names the directory
    (with and without history) and publish refuses the run."""
    run = write_run(tmp_path, service=False)
    _plant(run, alias)
    assert _t1_baseline_mean(run.paths) == 1.0  # one attempt, reward 1.0: the alias not read
    for ledger in (run.ledger, None):
        report = audit(run, ledger)
        assert (
            f"[names] tasks/t1/baseline/{alias}: not a name a run writes (an attempt "
            "directory is attempt-<n>, n from 1 without leading zeros): it was put there "
            "after the run; remove it"
        ) in report.lines(), report.lines()
        with pytest.raises(ConfigError, match="is not published"):
            publish(run.paths.root.parent, tmp_path / "board.json", RUN, report)


def test_the_viewer_answers_not_found_for_an_alias(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=False)
    _plant(run, "attempt-²")
    site = ViewerSite(run.paths.root.parent)
    for alias in ("attempt-²", "attempt-01", "attempt-x"):
        assert site.answer(f"/runs/{RUN}/tasks/t1/baseline/{alias}/").status == 404
    assert site.answer(f"/runs/{RUN}/tasks/t1/baseline/attempt-1/").status == 200


@pytest.mark.parametrize(
    ("name", "number"),
    [
        ("attempt-1", 1),
        ("attempt-12", 12),
        ("attempt-0", None),
        ("attempt-01", None),
        ("attempt-²", None),
        ("attempt-١", None),  # an Arabic-Indic one: a digit to str.isdigit, not to us
        ("attempt-1 ", None),
        ("attempt-1\n", None),
        ("attempt-+1", None),
        ("attempt-1_0", None),
        ("attempt-", None),
        ("Attempt-1", None),
    ],
)
def test_one_strict_pattern_names_attempt_directories(name: str, number: int | None) -> None:
    assert attempt_number(name) == number
