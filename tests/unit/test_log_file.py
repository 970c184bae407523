"""With a log file, a terminal gets one line per problem and the file gets the detail.

``python -m starter run`` hosts a worker in its own process: its warnings and tracebacks
(durabench's, the Temporal SDK's, Python's warnings) must not break up the live view. Run
in a subprocess: logging is set up once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import logging, sys, warnings
from pathlib import Path
from durabench.logs import configure_logging, get_logger

configure_logging("info", log_file=Path(sys.argv[1]))
def deep(n):
    if n == 0:
        raise RuntimeError("the build failed\\nwith a second line")
    deep(n - 1)
try:
    deep(30)
except RuntimeError:
    get_logger("durabench.attempt").warning("attempt failed", task="t1", exc_info=True)
    where = {"activity_id": "2", "activity_type": "prepare_image", "workflow_id": "run/r/t1"}
    logging.getLogger("temporalio.activity").warning(
        f"Completing activity as failed ({where})", exc_info=True,
        extra={"temporal_activity": where},
    )
warnings.warn("a deprecated thing")
get_logger("durabench.attempt").info("an ordinary step")
"""


def test_the_terminal_gets_a_line_per_problem_and_the_file_the_detail(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "run.log"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(log)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    lines = proc.stderr.splitlines()
    assert len(lines) == 3, proc.stderr
    assert all(f"(details: {log})" in line for line in lines), lines
    assert "attempt failed" in lines[0] and "Completing activity as failed" in lines[1]
    assert "RuntimeError" in lines[0] and "RuntimeError" in lines[1]  # what failed, in brief
    assert "prepare_image of run/r/t1: Completing activity as failed: RuntimeError" in lines[1]
    assert "activity_id" not in lines[1]  # the SDK's context dict, named shorter
    assert "a deprecated thing" in lines[2]
    assert "Traceback" not in proc.stderr and "ordinary step" not in proc.stderr

    records = [json.loads(line) for line in log.read_text().splitlines()]
    events = [r["event"] for r in records]
    assert "an ordinary step" in events
    failed = next(r for r in records if r["event"] == "attempt failed")
    assert failed["task"] == "t1" and "Traceback" in failed["exception"]
    assert "the build failed" in failed["exception"]


def test_the_logging_before_comes_back_after_the_file(tmp_path: Path) -> None:
    """A test (or a command) that hosts a worker in-process gets its own logging back."""
    import logging

    from durabench.logs import logs_to_file

    root = logging.getLogger()
    before = root.handlers[:]
    with logs_to_file(tmp_path / "run.log"):
        assert root.handlers != before
        logging.getLogger("x").warning("into the file")
    assert root.handlers == before
    assert "into the file" in (tmp_path / "run.log").read_text()
