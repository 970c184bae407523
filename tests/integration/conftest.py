"""Fixtures of the real-CLI session tests: a home with the real task, npm installs shared."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.daytona_fixtures import (  # noqa: F401 - fixtures
    daytona_clients_closed,
    standin,
)
from tests.integration.real_sessions import TASK


@pytest.fixture(scope="module")
def npm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's npm installs: each CLI is installed once per module."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (CI installs it)")
    return tmp_path_factory.mktemp("agent-tools")


@pytest.fixture
def home(settings: Settings, npm_cache: Path) -> Iterator[Settings]:
    """The test's home, with the real task and the module's npm installs."""
    settings.home.mkdir(parents=True, exist_ok=True)
    (settings.home / "agent-tools").symlink_to(npm_cache)
    source = next(t for t in load_suite("pytorch") if t.task_id == TASK)
    shutil.copytree(source.task_dir, settings.home / "suites" / "real" / TASK)
    yield settings
