"""A task's Dockerfile runs on the worker's daemon within limits."""

from __future__ import annotations

import io
import os
import uuid
from pathlib import Path

import docker
import pytest

from durabench.sandbox.docker.images import BUILD_LIMITS, build_context

pytestmark = pytest.mark.docker


def test_build_steps_run_under_the_memory_limit(tmp_path: Path) -> None:
    base = os.environ.get("DURABENCH_BASE_IMAGE", "python:3.12-slim")
    (tmp_path / "Dockerfile").write_text(
        f"FROM {base}\nRUN echo limit=$(cat /sys/fs/cgroup/memory.max "  # cgroup v2, or v1:
        "/sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null)\n"
    )
    client = docker.from_env()
    tag = f"durabench-build-limit-test:{uuid.uuid4().hex[:8]}"
    log = io.StringIO()
    try:
        assert build_context(client, tmp_path, "Dockerfile", tag, log, 300) is None, log.getvalue()
        assert f"limit={BUILD_LIMITS['memory']}" in log.getvalue()
    finally:
        try:
            client.images.remove(tag, force=True)
        except docker.errors.ImageNotFound:
            pass
        client.close()
