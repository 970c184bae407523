"""The container's cgroup is found by its full id under either driver and cgroup version."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.sandbox.docker import cgroup_count

ID = "ab" * 32


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(cgroup_count, "CGROUP_ROOT", tmp_path)
    return tmp_path


def _counts(directory: Path, n: str) -> None:
    directory.mkdir(parents=True)
    (directory / "pids.current").write_text(n)


@pytest.mark.parametrize(
    "where",
    [
        f"pids/docker/{ID}",
        f"pids/system.slice/docker-{ID}.scope",
        f"docker/{ID}",
        f"system.slice/docker-{ID}.scope",
    ],
)
def test_each_default_layout_is_found(root: Path, where: str) -> None:
    _counts(root / where, "5\n")
    assert cgroup_count.cgroup_tasks(ID, {}) == 5


def test_a_parent_the_container_names_is_used(root: Path) -> None:
    _counts(root / "pids" / "mine" / ID, "3")
    _counts(root / "pids" / "docker" / ID, "9")  # not where this container's cgroup is
    assert cgroup_count.cgroup_tasks(ID, {"HostConfig": {"CgroupParent": "/mine"}}) == 3


def test_anything_else_asks_the_daemon(root: Path) -> None:
    assert cgroup_count.cgroup_tasks(ID, {}) is None  # not found here
    _counts(root / "docker" / ID, "not a number")
    assert cgroup_count.cgroup_tasks(ID, {}) is None
    _counts(root / "docker" / "ab", "1")
    assert cgroup_count.cgroup_tasks("ab", {}) is None  # only a full id is trusted
