"""Refusals as a newcomer meets them: one ``Error:`` line, no traceback, no run left behind.

``python -m starter`` in a subprocess against the session's dev server. The run requests
here are refused before a workflow starts, so they need no Docker and no worker.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from durabench.settings.values import Settings
from tests.starter_cli import one_error, starter


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--suite", "pytorhc"], "unknown suite 'pytorhc'; known suites: pytorch"),
        (["--suite", "pytorch", "--agent", "claude-kode"], "unknown agent 'claude-kode'"),
        (["--suite", "pytorch", "--full-config", "sg_ful"], "sg_ful"),
        (["--suite", "pytorch", "--model", "Claude Sonnet"], "'Claude Sonnet' is not a model id"),
        (["--selection-file", "{bad}"], "is not JSON (line 1, column 2"),
        (["--selection-file", "{missing}"], "cannot read it"),
    ],
)
def test_a_plan_refusal_is_one_line_and_leaves_no_run(
    settings: Settings, tmp_path: Path, flags: list[str], said: str
) -> None:
    bad, missing = tmp_path / "bad.json", tmp_path / "missing.json"
    bad.write_text("{bad")
    flags = [f.format(bad=bad, missing=missing) for f in flags]
    run_id = f"refused-{uuid.uuid4().hex[:8]}"
    proc = starter(settings, "run", *flags, "--yes", "--run-id", run_id)
    assert said in one_error(proc)
    assert "started" not in proc.stdout

    status = starter(settings, "status", run_id)
    assert one_error(status) == (
        f"Error: no run {run_id}; list the runs with `python -m starter status`"
    )


@pytest.mark.docker
def test_a_refusal_the_worker_makes_is_one_line_too(settings: Settings) -> None:
    """Gap-fill needs earlier runs, which only the worker's plan reads: still no traceback."""
    proc = starter(settings, "run", "--suite", "pytorch", "--baseline-only", "--yes")
    error = one_error(proc)
    assert "baseline_only is gap-fill, but 4 task(s) have no valid sourcegraph_full" in error


def test_an_agent_option_every_worker_would_refuse_is_refused_at_plan_time(
    settings: Settings, tmp_path: Path
) -> None:
    """A mount outside DURABENCH_HOME/mounts/: refused once, not by every attempt's worker."""
    plan = tmp_path / "plan.json"
    plan.write_text('{"cases": [{"exit_code": 0}]}')
    run_id = f"refused-{uuid.uuid4().hex[:8]}"
    proc = starter(
        settings, "run", "--suite", "pytorch", "--agent", "replay",
        "--agent-opt", f"plan={plan}", "--agent-opt", f"marker_dir={tmp_path / 'markers'}",
        "--yes", "--run-id", run_id,
    )  # fmt: skip
    error = one_error(proc)
    assert f"mount host directory {tmp_path / 'markers'}" in error
    assert "DURABENCH_HOME/mounts/" in error
    status = starter(settings, "status", run_id)
    assert one_error(status) == (
        f"Error: no run {run_id}; list the runs with `python -m starter status`"
    )
