"""``starter run``'s in-process worker fails attempts: the terminal gets lines, the log the rest.

A base image with nothing in it (no shell, no python) builds every task image and fails
every sandbox: the worker logs a warning with a traceback per failed activity. The
person at the terminal reads one line per failure, naming the run's log file.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator

import pytest

from durabench.sandbox import docker_client
from durabench.settings.values import Settings
from tests.starter_cli import starter

EMPTY_BASE = "durabench-test/empty-base:1"
"""Fixed, so the task images built from it are the same ones each time (no pile-up)."""


@pytest.fixture
def empty_base() -> Iterator[str]:
    client = docker_client()
    try:
        dockerfile = io.BytesIO(b"FROM scratch\nLABEL durabench-test=empty-base\n")
        client.images.build(fileobj=dockerfile, tag=EMPTY_BASE, rm=True)
        yield EMPTY_BASE
    finally:
        client.close()


@pytest.mark.docker
def test_worker_failures_are_one_line_each_on_the_terminal(
    settings: Settings, empty_base: str
) -> None:
    run_id = f"log-{uuid.uuid4().hex[:8]}"
    broken = settings.model_copy(update={"base_image": empty_base})
    flags = ("--suite", "pytorch", "--yes", "--infra-retries", "0", "--run-id", run_id)
    proc = starter(broken, "run", *flags, timeout=600)
    log = settings.home / "logs" / f"{run_id}.log"
    assert f"Worker log: {log}" in proc.stdout
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    problems = [line for line in lines if not line.startswith("Error: Nothing was measured")]
    assert problems, proc.stderr  # the attempts failed, and said so
    assert all(line.endswith(f"(details: {log})") for line in problems), problems
    assert "Traceback" in log.read_text()
