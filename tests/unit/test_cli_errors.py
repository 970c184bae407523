"""Errors a user can cause, as the CLI prints them: what was wrong and what to do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ActivityError, ApplicationError

from durabench import __version__
from durabench.errors import ConfigError
from durabench.tasks import load_suite
from starter.options import failure_message


def _starter(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _python("-m", "starter", *args, **env)


def _python(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
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
    ledger = tmp_path / "gateway.jsonl"
    answers = [
        {"status": 200, "usage": {"model": "m-20250101", "input": 9, "output": 3}},
        {"status": 429, "usage": {"error": "rate_limit_error"}},
    ]
    ledger.write_text(
        "".join(
            json.dumps(
                {
                    "at": 1.0,
                    "provider": "anthropic",
                    "path": "/v1/messages",
                    "asked_model": "m",
                    **a,
                }
            )
            + "\n"
            for a in answers
        )
    )
    proc = _starter(
        "classify",
        str(transcript),
        "--ledger",
        str(ledger),
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
    assert zero.returncode == 2 and "0 is not in the range 1<=x" in zero.stderr


def test_a_service_scale_must_be_above_zero(tmp_path: Path) -> None:
    run = ("run", "--suite", "pytorch", "--service-url", "http://127.0.0.1:1")
    proc = _starter(*run, "--service-scale", "0", DURABENCH_HOME=str(tmp_path))
    assert proc.returncode == 2 and "Invalid value for '--service-scale'" in proc.stderr
    score = _starter("score", "r1", "--service-scale", "-1", DURABENCH_HOME=str(tmp_path))
    assert score.returncode == 2 and "Invalid value for '--service-scale'" in score.stderr


def test_output_off_a_terminal_never_wraps_a_long_path(tmp_path: Path) -> None:
    """Piped output keeps a path on one line, whatever its length (no COLUMNS set)."""
    task = load_suite("pytorch", tmp_path)[0].task_dir
    deep = tmp_path.joinpath(*(["a-rather-long-directory-name"] * 6), "tensor-broadcast-001")
    shutil.copytree(task, deep)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run(
        [sys.executable, "-m", "starter", "tasks", "check", str(deep)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(str(deep)) > 200
    assert any(str(deep) in line for line in proc.stdout.splitlines()), proc.stdout


def test_a_failure_message_keeps_durabench_sentence_over_its_cause() -> None:
    """The first durabench error of a chain says what to do; its causes only say what broke."""
    try:
        try:
            json.loads("{bad")
        except json.JSONDecodeError as exc:
            raise ConfigError("selection file s.json is not JSON; it must be {...}") from exc
    except ConfigError as exc:
        local = exc
    assert failure_message(local) == "selection file s.json is not JSON; it must be {...}"

    inner = ApplicationError("Expecting property name", type="JSONDecodeError")
    ours = ApplicationError("selection file s.json is not JSON", type="ConfigError")
    ours.__cause__ = inner
    activity = ActivityError(
        "activity error",
        scheduled_event_id=1,
        started_event_id=2,
        identity="w",
        activity_type="plan_run",
        activity_id="1",
        retry_state=None,
    )
    activity.__cause__ = ours
    failed = WorkflowFailureError(cause=activity)
    assert failure_message(failed) == "selection file s.json is not JSON"
    foreign = ApplicationError("boom", type="KeyError")
    assert failure_message(WorkflowFailureError(cause=foreign)) == "boom"


def test_the_worker_has_a_cli_and_every_entry_point_a_version(tmp_path: Path) -> None:
    """``--help`` explains and exits; it starts no worker and no server (none answers here)."""
    env = {"DURABENCH_HOME": str(tmp_path), "TEMPORAL_ADDRESS": "127.0.0.1:1"}
    worker = Path(__file__).resolve().parents[2] / "worker.py"
    for cmd in ([str(worker)], ["-m", "starter", "worker"]):
        helped = _python(*cmd, "--help", **env)
        assert helped.returncode == 0, helped.stderr
        assert "Usage:" in helped.stdout and "DURABENCH_MAX_SANDBOXES" in helped.stdout
        version = _python(*cmd, "--version", **env)
        assert version.returncode == 0 and __version__ in version.stdout, version.stderr
    top = _starter("--version", **env)
    assert top.returncode == 0 and __version__ in top.stdout
    assert not (tmp_path / "temporal.db").exists()
