"""Errors a user can cause, as the CLI prints them: what was wrong and what to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _starter(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starter", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_run_without_docker_says_how_to_start_it(tmp_path: Path) -> None:
    proc = _starter(
        "run",
        "--suite",
        "pytorch",
        "--yes",
        DOCKER_HOST="unix:///nonexistent/docker.sock",
        DURABENCH_HOME=str(tmp_path),
    )
    assert proc.returncode == 1
    assert "Docker Engine not reachable" in proc.stderr and "start it" in proc.stderr
    assert not (tmp_path / "temporal.db").exists()  # nothing was started


def test_bad_setting_names_the_variable(tmp_path: Path) -> None:
    proc = _starter("run", "--suite", "pytorch", DURABENCH_INFRA_RETRIES="many")
    assert proc.returncode == 1
    assert "DURABENCH_INFRA_RETRIES='many'" in proc.stderr


def test_bad_agent_option_is_refused() -> None:
    proc = _starter("run", "--suite", "pytorch", "--agent-opt", "plan")
    assert proc.returncode == 2
    assert "'plan' is not KEY=VALUE" in proc.stderr


def test_tasks_check_names_the_missing_file(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.toml").write_text("[task]\nid = 'x'\n")
    proc = _starter("tasks", "check", str(tmp_path / "t"))
    assert proc.returncode == 1
    assert "missing instruction.md" in proc.stderr


def test_classify_prints_the_verdict_as_json(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    events = [
        {"type": "system", "subtype": "init", "model": "m-20250101"},
        {"type": "result", "subtype": "success", "is_error": True, "result": "Rate limited (429)"},
    ]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in events))
    proc = _starter(
        "classify",
        str(transcript),
        "--agent",
        "claude-code",
        "--requested-model",
        "m",
        "--exit-code",
        "1",
        "--wall-seconds",
        "5",
        "--files-changed",
        "0",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["exit_class"] == "infra_rate_limit"
    assert verdict["served_model"] == "m-20250101"
    assert {"reason", "signals", "tokens", "cost_usd"} <= verdict.keys()


def test_run_says_what_to_run_and_pairs_rerun_with_from(tmp_path: Path) -> None:
    nothing = _starter("run", DURABENCH_HOME=str(tmp_path))
    assert nothing.returncode == 2
    assert "say what to run: --suite NAME, --selection-file FILE" in nothing.stderr
    half = _starter("run", "--rerun", "failed", DURABENCH_HOME=str(tmp_path))
    assert half.returncode == 2
    assert "--rerun and --from go together" in half.stderr
    zero = _starter("set-parallel", "some-run", "0", DURABENCH_HOME=str(tmp_path))
    assert zero.returncode == 2 and "0 is not in the range x>=1" in zero.stderr


def test_a_service_scale_must_be_above_zero(tmp_path: Path) -> None:
    run = ("run", "--suite", "pytorch", "--service-url", "http://127.0.0.1:1")
    proc = _starter(*run, "--service-scale", "0", DURABENCH_HOME=str(tmp_path))
    assert proc.returncode == 2 and "Invalid value for '--service-scale'" in proc.stderr
    score = _starter("score", "r1", "--service-scale", "-1", DURABENCH_HOME=str(tmp_path))
    assert score.returncode == 2 and "Invalid value for '--service-scale'" in score.stderr
