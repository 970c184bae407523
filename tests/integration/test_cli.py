"""The CLI as a user types it: ``python -m starter run ... --yes`` in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from durabench.settings.values import Settings

pytestmark = pytest.mark.docker


def test_run_yes_prints_plan_table_and_results_dir(settings: Settings) -> None:
    run_id = f"cli-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DURABENCH_HOME": str(settings.home),
        "TEMPORAL_ADDRESS": str(settings.temporal_address),
        "DURABENCH_TASK_QUEUE": settings.task_queue,
        "DURABENCH_BASE_IMAGE": settings.base_image,
    }
    cmd = [sys.executable, "-m", "starter", "run", "--suite", "pytorch", "--agent", "oracle"]
    proc = subprocess.run(
        [*cmd, "--yes", "--parallel", "4", "--run-id", run_id],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for word in ("model", "suite", "config mode", "parallel slots", "category", "tasks"):
        assert word in out
    assert out.count("1.00 | 1.00") == 8 and "- | -" not in out  # 4 tasks x 2 lanes
    assert f"Results: {settings.runs_dir / run_id}" in out

    again = subprocess.run(
        [*cmd, "--yes", "--run-id", run_id], env=env, capture_output=True, text=True, check=False
    )
    assert again.returncode == 1
    assert f"run {run_id} already exists" in again.stderr


def test_unknown_suite_lists_known_ones(settings: Settings) -> None:
    env = {
        **os.environ,
        "DURABENCH_HOME": str(settings.home),
        "TEMPORAL_ADDRESS": str(settings.temporal_address),
        "DURABENCH_TASK_QUEUE": settings.task_queue,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "starter", "run", "--suite", "pytorhc", "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert "unknown suite 'pytorhc'" in proc.stderr and "pytorch" in proc.stderr
