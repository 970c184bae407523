"""Shared fixtures: one real Temporal dev server per session, Docker detection, settings."""

from __future__ import annotations

import gc
import os
import shutil
import socket
import subprocess
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import structlog
from temporalio.client import Client

from durabench.settings.values import Settings
from runtime.client import connect_when_ready
from runtime.embedded import dev_server_args, wait_for_port


@pytest.fixture(autouse=True)
def _structlog_from_its_defaults() -> None:
    """Each test starts from structlog's defaults (every level, no caching).

    A test that ran the CLI or a worker in this process configured logging for the whole
    process (the CLI at ``warning``): what the next test captures must not depend on the
    order the tests ran in.
    """
    structlog.reset_defaults()


SHARED_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def docker_available() -> bool:
    """Whether a Docker daemon answers (docker-py leaks its probe's socket when none does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            import docker

            client = docker.from_env()
            try:
                client.ping()
            finally:
                client.close()
            found = True
        except Exception:  # noqa: BLE001 - any failure means no usable daemon
            found = False
        gc.collect()
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``docker``/``browser`` tests without their tool, unless CI requires them.

    CI sets DURABENCH_REQUIRE_DOCKER=1 and DURABENCH_REQUIRE_BROWSER=1: there a missing
    daemon or browser fails the run instead of skipping half of it.
    """
    needs = {
        "docker": (docker_available, "DURABENCH_REQUIRE_DOCKER", "no Docker daemon"),
        "browser": (
            lambda: shutil.which("chromium") is not None,
            "DURABENCH_REQUIRE_BROWSER",
            "no chromium",
        ),
    }
    for marker, (available, required, why) in needs.items():
        if os.environ.get(required) == "1" or available():
            continue
        skip = pytest.mark.skip(reason=f"{why} (set {required}=1 to fail instead)")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


@contextmanager
def dev_server(log: Path, port: int, ui_port: int | None = None) -> Iterator[None]:
    """``temporal server start-dev`` (in-memory, loopback) while open; its output in ``log``."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            dev_server_args(port=port, ui_port=ui_port, db_file=None),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``temporal server start-dev`` (in-memory, headless, loopback) for the session."""
    port = free_port()
    log = tmp_path_factory.mktemp("temporal") / "server.log"
    with dev_server(log, port):
        import asyncio

        asyncio.run(wait_for_port("127.0.0.1", port, timeout_s=60, log=log))
        yield f"127.0.0.1:{port}"


@pytest.fixture(scope="session")
async def client(temporal_address: str) -> AsyncIterator[Client]:
    """A client with durabench's data converter."""
    yield await connect_when_ready(temporal_address, "default")


@pytest.fixture
def settings(tmp_path: Path, temporal_address: str) -> Settings:
    """Settings of one test: its own home and task queue, CI's base image if set."""
    return Settings(
        home=tmp_path / "home",
        temporal_address=temporal_address,
        task_queue=f"test-{uuid.uuid4().hex[:8]}",
        base_image=os.environ.get("DURABENCH_BASE_IMAGE", Settings.from_env().base_image),
        gateway_port=0,  # a gateway of its own per test: tests run one after another
    )


@pytest.fixture
def shared_fixtures() -> Path:
    """``../shared/fixtures``; tests that need it skip cleanly where it is absent."""
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(
            f"{SHARED_FIXTURES} is not present (recorded transcripts and task files kept "
            "beside the checkout: docs/contributing.md#shared-fixtures)"
        )
    return SHARED_FIXTURES
