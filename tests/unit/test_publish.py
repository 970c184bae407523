import os
import subprocess
import sys
from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.models.audit import AuditReport, Finding
from durabench.models.results import RunResult
from durabench.results.dashboard import Dashboard, publish
from durabench.results.files import write_reports
from durabench.settings.paths import RunPaths
from tests.starter_cli import one_error
from tests.unit.finished_run import RUN, write_run
from tests.unit.results_set import attempt, hand_result


def _clean(run_id: str) -> AuditReport:
    return AuditReport(run_id=run_id, clean=True)


def _store(runs: Path, result: RunResult, run_id: str) -> RunResult:
    plan = result.plan.model_copy(
        update={"request": result.plan.request.model_copy(update={"run_id": run_id})}
    )
    result = result.model_copy(update={"plan": plan})
    paths = RunPaths.for_run(runs, run_id)
    write_reports(paths, result)
    assert paths.report_md.is_file() and paths.report_html.is_file()
    return result


def test_publish_adds_runs_and_rebuilds_the_file(tmp_path: Path) -> None:
    runs, board = tmp_path / "runs", tmp_path / "dashboard.json"
    locked = hand_result().plan.model_copy(update={"worker_lock": "sha256:" + "c" * 64})
    _store(runs, hand_result().model_copy(update={"plan": locked}), "a")
    _store(runs, hand_result(), "b")
    publish(runs, board, "b", _clean("b"))
    built = publish(runs, board, "a", _clean("a"))
    again = publish(runs, board, "a", _clean("a"))
    assert [e.run_id for e in again.runs] == ["a", "b"]
    entry = Dashboard.model_validate_json(board.read_text()).runs[0]
    assert entry.mean_delta == pytest.approx(1 / 6)
    assert (entry.pairs_compared, entry.excluded_pairs, entry.mcnemar_p) == (3, 1, 1.0)
    assert entry.ci == (-0.5, 1.0) and entry.cost_usd == 6.0
    # Each lane's mean over its scored attempts, t4's excluded pair left out (results_set).
    assert entry.lanes == {"baseline": 0.6, "sourcegraph_full": 2 / 3}
    assert entry.cli_versions == {
        "baseline": ("2.1.332",),
        "sourcegraph_full": ("2.0.14", "2.1.332"),
    }
    assert entry.mixed_cli_versions == ("t3",)
    assert entry.agent_images["sourcegraph_full"] == ("sha256:aaaaaaaaaaaa", "sha256:bbbbbbbbbbbb")
    assert entry.worker_lock == "sha256:" + "c" * 64
    assert again.runs[1].worker_lock == ""  # a plan from before locks were recorded
    assert built.runs == again.runs


def test_publish_refuses_a_swapped_model(tmp_path: Path) -> None:
    result = hand_result()
    swapped = attempt(
        "t1",
        "baseline",
        2,
        "infra_other",
        None,
        reason="MODEL MISMATCH: requested m, served other",
    )
    _store(tmp_path, result.model_copy(update={"attempts": (*result.attempts, swapped)}), "x")
    with pytest.raises(ConfigError, match="measured another model"):
        publish(tmp_path, tmp_path / "d.json", "x", _clean("x"))
    assert not (tmp_path / "d.json").exists()


def test_publish_refuses_infra_only_and_missing_runs(tmp_path: Path) -> None:
    result = hand_result()
    infra = tuple(a for a in result.attempts if a.infra)
    _store(tmp_path, result.model_copy(update={"attempts": infra}), "y")
    with pytest.raises(ConfigError, match="every attempt was infra"):
        publish(tmp_path, tmp_path / "d.json", "y", _clean("y"))
    with pytest.raises(ConfigError, match="no results at"):
        publish(tmp_path, tmp_path / "d.json", "never-ran", _clean("never-ran"))


def test_publish_refuses_a_failed_audit_unless_forced_and_keeps_what_was_forced(
    tmp_path: Path,
) -> None:
    runs, board = tmp_path / "runs", tmp_path / "dashboard.json"
    _store(runs, hand_result(), "a")
    _store(runs, hand_result(), "b")
    finding = Finding(check="ledger", where="t1/baseline/attempt-1", message="result.json changed")
    failed = AuditReport(run_id="a", clean=False, findings=(finding,))
    with pytest.raises(ConfigError, match=r"its audit found 1 problem\(s\), first \[ledger\]"):
        publish(runs, board, "a", failed)
    assert not board.exists()

    publish(runs, board, "a", failed, force=True)
    skipped = AuditReport(run_id="b", clean=True, ledger_skipped="no history")
    built = publish(runs, board, "b", skipped, history_expected=False)  # no server at all
    a, b = built.runs
    assert a.forced == ("[ledger] t1/baseline/attempt-1: result.json changed",)
    assert a.ledger_checked is True  # kept as published when "b" rebuilt the file
    assert (b.forced, b.ledger_checked) == ((), False)


def test_publishing_a_run_keeps_other_entries_as_they_were_published(tmp_path: Path) -> None:
    """An edited results.json of a published run never reaches the file unaudited."""
    runs, board = tmp_path / "runs", tmp_path / "dashboard.json"
    _store(runs, hand_result(), "a")
    _store(runs, hand_result(), "b")
    first = publish(runs, board, "a", _clean("a")).runs[0]
    paths = RunPaths.for_run(runs, "a")
    edited = RunResult.model_validate_json(paths.results.read_text())
    lanes = tuple(s.model_copy(update={"mean_reward": 0.42}) for s in edited.lanes)
    paths.results.write_text(edited.model_copy(update={"lanes": lanes}).model_dump_json())
    built = publish(runs, board, "b", _clean("b"))
    assert [e.run_id for e in built.runs] == ["a", "b"]
    assert built.runs[0] == first  # as audited when it was published


def test_a_files_only_audit_is_refused_while_a_server_that_may_hold_the_history_answers(
    tmp_path: Path,
) -> None:
    """Issue 47 (left by defect 3): a files-only audit passed publish without --force even
    while the Temporal server answered (or was configured) and had no history of the run:
    rename the run, and nothing of it was held against what the run recorded. Refused now,
    unless forced, and the forced entry records why its history was not read."""
    runs, board = tmp_path / "runs", tmp_path / "dashboard.json"
    _store(runs, hand_result(), "a")
    skipped = AuditReport(run_id="a", clean=True, ledger_skipped="no history of run/a")
    with pytest.raises(ConfigError) as refused:
        publish(runs, board, "a", skipped, history_expected=True)
    said = str(refused.value)
    assert "run a is not published: its audit checked the files only (no history of run/a)" in (
        said
    )
    assert "--force" in said
    assert not board.exists()

    (entry,) = publish(runs, board, "a", skipped, force=True, history_expected=True).runs
    assert entry.ledger_checked is False
    assert entry.forced == ("[ledger] not checked: no history of run/a",)


def test_a_files_only_audit_is_published_where_no_server_holds_any_history(
    tmp_path: Path,
) -> None:
    """No server configured and none answering (results carried to another machine): the
    files are all there is, and the entry says the history was not checked."""
    runs, board = tmp_path / "runs", tmp_path / "dashboard.json"
    _store(runs, hand_result(), "a")
    skipped = AuditReport(run_id="a", clean=True, ledger_skipped="Temporal cannot be reached")
    (entry,) = publish(runs, board, "a", skipped, history_expected=False).runs
    assert (entry.ledger_checked, entry.forced) == (False, ())


def _publish_cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}
    base |= {"DURABENCH_HOME": str(home), "TEMPORAL_CONFIG_FILE": str(home / "no-profile")}
    return subprocess.run(
        [sys.executable, "-m", "starter", "publish", RUN, *args],
        env=base | env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_publish_refuses_a_files_only_audit_while_a_server_is_named(tmp_path: Path) -> None:
    """TEMPORAL_ADDRESS names a server that does not answer: its history may be there, so
    the files alone do not publish the run without --force. (With no address the starter
    runs this home's embedded server, which answers: a run it has no history of is refused
    the same way; the unit tests above cover the case where nothing answers.)"""
    write_run(tmp_path, service=False)
    board = tmp_path / "dashboard.json"
    board.unlink()
    named = _publish_cli(tmp_path, TEMPORAL_ADDRESS="127.0.0.1:9")
    assert "its audit checked the files only (Temporal cannot be reached" in one_error(named)
    assert not board.exists()

    forced = _publish_cli(tmp_path, "--force", TEMPORAL_ADDRESS="127.0.0.1:9")
    assert forced.returncode == 0, forced.stderr
    (entry,) = Dashboard.model_validate_json(board.read_text()).runs
    assert entry.ledger_checked is False
    assert entry.forced[0].startswith("[ledger] not checked: Temporal cannot be reached")
