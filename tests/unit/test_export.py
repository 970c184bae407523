"""Results as data: ``starter export`` rows read back by csv and json, ``starter schema``."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema

from durabench.results.export import to_csv
from durabench.settings.paths import RunPaths
from tests.unit.results_set import ATTEMPTS, TASKS, hand_result


def _starter(home: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "starter", *args],
        env={**os.environ, "DURABENCH_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    paths = RunPaths.for_run(home / "runs", "hand")
    paths.root.mkdir(parents=True)
    paths.results.write_text(hand_result().model_dump_json(indent=2))
    return home


def test_attempts_export_as_csv_and_jsonl_one_flat_row_each(tmp_path: Path) -> None:
    home = _home(tmp_path)
    rows = list(csv.DictReader(io.StringIO(_starter(home, "export", "hand", "--format", "csv"))))
    lines = _starter(home, "export", "hand", "--format", "jsonl").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(rows) == len(records) == len(ATTEMPTS)
    for row, record, want in zip(rows, records, ATTEMPTS, strict=True):
        assert (row["task_id"], row["lane"], row["attempt"]) == (
            want.task_id,
            want.lane,
            str(want.attempt),
        )
        assert record["exit_class"] == row["exit_class"] == want.exit_class
        assert record["reward"] == want.reward
        assert row["reward"] == ("" if want.reward is None else str(want.reward))
        assert record["tokens.input"] == want.tokens.input == int(row["tokens.input"])
        assert record["signals.claims_complete"] == want.signals.claims_complete
        assert record["included"] == want.included
        assert record["cli_version"] == row["cli_version"] == want.cli_version
        assert record["agent_image_id"] == want.agent_image_id and record["task_image_id"]
        assert all(not isinstance(v, dict) for v in record.values())  # flat
    t4 = [r for r in records if r["task_id"] == "t4"]
    assert all(r["pair_excluded"] for r in t4)
    assert not any(r["pair_excluded"] for r in records if r["task_id"] != "t4")


def test_pairs_export_one_row_per_task_with_lanes_and_delta(tmp_path: Path) -> None:
    home = _home(tmp_path)
    out = _starter(home, "export", "hand", "--format", "jsonl", "--level", "pair")
    pairs = {p["task_id"]: p for p in map(json.loads, out.splitlines())}
    assert list(pairs) == list(TASKS)
    assert pairs["t2"]["baseline.mean"] == 0.0 and pairs["t2"]["sourcegraph_full.mean"] == 1.0
    assert pairs["t2"]["delta"] == 1.0
    assert pairs["t3"]["baseline.mean"] == 0.5 and pairs["t3"]["delta"] == -0.5
    assert pairs["t4"]["excluded"] and pairs["t4"]["delta"] is None
    assert "infra_usage_cap" in pairs["t4"]["exclusion_reason"]
    assert pairs["t1"]["baseline.cli_versions"] == ["2.1.332"]
    assert pairs["t3"]["sourcegraph_full.cli_versions"] == ["2.0.14", "2.1.332"]
    table = _starter(home, "export", "hand", "--format", "csv", "--level", "pair")
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [r["task_id"] for r in rows] == list(TASKS)
    assert rows[0]["baseline.attempts"] == "1" and rows[2]["baseline.attempts"] == "2"


def test_schema_validates_a_real_results_file(tmp_path: Path) -> None:
    home = _home(tmp_path)
    schema = json.loads(_starter(home, "schema"))
    assert schema["title"] == "RunResult"
    results = json.loads(RunPaths.for_run(home / "runs", "hand").results.read_text())
    jsonschema.validate(results, schema)
    results["attempts"][0]["exit_class"] = "made_up"
    try:
        jsonschema.validate(results, schema)
    except jsonschema.ValidationError as exc:
        assert "made_up" in exc.message
    else:
        raise AssertionError("a made-up exit class passed the schema")
    attempt = json.loads(_starter(home, "schema", "attempt"))
    assert attempt["title"] == "AttemptResult"


def test_csv_neutralises_cells_a_spreadsheet_would_run_as_formulas(tmp_path: Path) -> None:
    """OWASP's rule: a text cell starting with = + - @ tab or CR gets a leading quote."""
    home = _home(tmp_path)
    paths = RunPaths.for_run(home / "runs", "hand")
    result = hand_result()
    hostile = ('=HYPERLINK("http://x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1")
    attempts = (
        tuple(
            a.model_copy(update={"last_message": text, "reason": text})
            for a, text in zip(result.attempts, hostile * 3, strict=False)
        )
        + result.attempts[len(hostile) * 3 :]
    )
    paths.results.write_text(result.model_copy(update={"attempts": attempts}).model_dump_json())
    rows = list(csv.DictReader(io.StringIO(_starter(home, "export", "hand", "--format", "csv"))))
    for row, text in zip(rows, hostile * 3, strict=False):
        assert row["last_message"] == "'" + text and row["reason"] == "'" + text
    pairs = _starter(home, "export", "hand", "--format", "csv", "--level", "pair")
    t3 = next(r for r in csv.DictReader(io.StringIO(pairs)) if r["task_id"] == "t3")
    assert t3["delta"] == "-0.5"  # a number stays a number
    assert list(csv.reader(io.StringIO(to_csv([{"x": "\r=1"}])))) == [["x"], ["'\\r=1"]]


def test_a_pair_row_counts_every_attempt_infra_retries_included() -> None:
    """Each lane's ``attempts`` counts what ran; ``included`` only what is scored.

    From the hand set: t3 full ran infra_rate_limit then completed 0.0: 2 attempts,
    1 included; t4 full ran infra_usage_cap twice: 2 attempts, 0 included; t3 baseline
    ran 2, both scored; t5 full ran 1 with no reward: 1 attempt, 0 included.
    """
    from durabench.results.export import pair_rows

    rows = {r["task_id"]: r for r in pair_rows(hand_result())}
    counts = {
        (t, lane): (rows[t][f"{lane}.attempts"], rows[t][f"{lane}.included"])
        for t, lane in [
            ("t3", "sourcegraph_full"),
            ("t4", "sourcegraph_full"),
            ("t3", "baseline"),
            ("t5", "sourcegraph_full"),
        ]
    }
    assert counts == {
        ("t3", "sourcegraph_full"): (2, 1),
        ("t4", "sourcegraph_full"): (2, 0),
        ("t3", "baseline"): (2, 2),
        ("t5", "sourcegraph_full"): (1, 0),
    }
