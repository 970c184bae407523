"""What runs in a Docker sandbox is counted from its cgroup on this host, not by ``ps``.

``docker top`` makes the daemon run ``ps`` for each count; with the daemon on this host
the container's ``pids.current`` gives the count without it, zombies included. When the
cgroup cannot be read here the daemon is asked, as before.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from durabench.sandbox import DockerSandbox, SandboxSpec
from durabench.sandbox.docker import cgroup_count
from durabench.settings.values import Settings

pytestmark = pytest.mark.docker

ZOMBIE = "sleep 0 & exec sleep 300"
"""A ``sleep 300`` whose child has ended and is never reaped: a zombie under it."""


@pytest.fixture
async def box(settings: Settings) -> AsyncIterator[DockerSandbox]:
    sb = DockerSandbox(
        SandboxSpec(
            name=f"durabench-cgroup-{uuid.uuid4().hex[:8]}",
            image=settings.base_image,
            labels={"durabench.run": "cgroup-count"},
            pids_limit=64,
        )
    )
    await sb.start()
    try:
        yield sb
    finally:
        await sb.stop(delete=True)


@pytest.fixture
def tops(box: DockerSandbox, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ``top`` requests the sandbox sends, by container."""
    asked: list[str] = []
    top: Callable[..., Any] = box.client.api.top

    def counted(container: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(container)
        return top(container, *args, **kwargs)

    monkeypatch.setattr(box.client.api, "top", counted)
    return asked


async def _start_zombie(box: DockerSandbox) -> None:
    await box.exec_detached(["sh", "-c", ZOMBIE], user="0")
    seen = "for s in /proc/[0-9]*/status; do grep -q '^State:.*Z' $s && exit 0; done; exit 1"
    for _ in range(200):  # the detached exec returns before its process is surely there
        if (await box.exec(["sh", "-c", seen], user="0")).exit_code == 0:
            return
    raise AssertionError("the zombie never showed in /proc")


async def test_the_cgroup_counts_and_the_daemon_runs_no_ps(
    box: DockerSandbox, tops: list[str]
) -> None:
    assert await box.others_running() == 0  # docker-init and the keeper are not counted
    assert await box.process_slots_left() == 64 - 2
    await _start_zombie(box)
    assert await box.others_running() == 2  # the parent, and its zombie too
    assert tops == []


async def test_the_daemon_is_asked_when_the_cgroup_cannot_be_read(
    box: DockerSandbox, tops: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cgroup_count, "CGROUP_ROOT", tmp_path / "no-cgroups")
    assert await box.others_running() == 0
    await _start_zombie(box)
    assert await box.others_running() == 1  # ps lists the parent; the zombie it leaves out
    assert tops == [box.spec.name, box.spec.name]


def test_only_a_unix_socket_is_this_host() -> None:
    assert cgroup_count.local_daemon("http+docker://localhost")
    assert not cgroup_count.local_daemon("http://10.0.0.2:2375")
    assert not cgroup_count.local_daemon("http+docker://ssh")
