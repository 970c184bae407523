"""A damaged results.json or plan.json gives every command one line, not pydantic's page.

Issue 47 defect 8: ``report``, ``export``, ``publish --force`` and ``audit`` printed a
pydantic traceback for garbage in either file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.starter_cli import one_error
from tests.unit.finished_run import RUN, write_run

GARBAGE = {
    "not json": b"{not json",
    "not a run's": b'{"schema_version": 3}',
    "not utf-8": b'{"plan": "\xff\xfe"}',
    "deep": b"[" * 100_000 + b"]" * 100_000,
}


def _starter(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DURABENCH_HOME": str(home), "TEMPORAL_ADDRESS": "127.0.0.1:9"}
    return subprocess.run(
        [sys.executable, "-m", "starter", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("garbage", sorted(GARBAGE))
@pytest.mark.parametrize(
    ("name", "command"),
    [
        ("results.json", ("report", RUN)),
        ("results.json", ("export", RUN)),
        ("plan.json", ("audit", RUN)),
        ("results.json", ("publish", RUN, "--force")),
    ],
)
def test_a_damaged_file_is_one_line(
    tmp_path: Path, garbage: str, name: str, command: tuple[str, ...]
) -> None:
    run = write_run(tmp_path, service=False)
    (run.paths.root / name).write_bytes(GARBAGE[garbage])
    line = one_error(_starter(tmp_path, *command))
    assert name in line, line
