"""A container's tasks counted from its cgroup on this host, without asking the daemon.

``docker top`` makes the daemon run ``ps`` (a process of its own, some 35 ms of CPU) for
every count. When the daemon runs on this host (the client speaks to it over a local
unix socket), the kernel's own count is a file read away: the ``pids`` controller's
``pids.current`` of the container's cgroup. It is the very counter the container's
process limit is enforced on: every thread of every process in the container (those an
``exec`` started too), and a zombie until its parent reaps it, which ``ps`` no longer
lists. Nothing in the container can lower it: the kernel charges each task to the
cgroup it was forked in, and moving a task out needs the host's cgroup tree, which a
container without ``CAP_SYS_ADMIN`` cannot write.

The cgroup is found by the container's full id (64 hex digits: no other directory can
match), under the daemon's default parents for either cgroup driver, cgroup v1 or v2.
Anything else (a daemon elsewhere, a rootless daemon, a custom systemd slice, a cgroup
not readable from here) gives ``None``, and the caller asks the daemon as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["cgroup_memory_mib", "cgroup_tasks", "local_daemon"]

CGROUP_ROOT = Path("/sys/fs/cgroup")
"""Where the host's cgroup tree is mounted (tests point it elsewhere)."""

_LOCAL_BASE_URL = "http+docker://localhost"
"""docker-py's base URL for a daemon on a unix socket (tcp and ssh have others)."""

_DEFAULT_PARENTS = ("docker", "system.slice")
"""The daemon's parent cgroup under the ``cgroupfs`` and the ``systemd`` driver."""


def local_daemon(base_url: str) -> bool:
    """Whether the client reaches its daemon over a unix socket, so on this host."""
    return base_url == _LOCAL_BASE_URL


def _candidates(
    container_id: str, attrs: Mapping[str, Any], controller: str = "pids"
) -> Iterator[Path]:
    parent = str((attrs.get("HostConfig") or {}).get("CgroupParent") or "").strip("/")
    for base in (CGROUP_ROOT / controller, CGROUP_ROOT):  # cgroup v1, then the unified v2
        for under in (parent,) if parent else _DEFAULT_PARENTS:
            yield base / under / container_id
            yield base / under / f"docker-{container_id}.scope"


def cgroup_tasks(container_id: str, attrs: Mapping[str, Any]) -> int | None:
    """The container's tasks (threads, zombies included) as its cgroup counts them.

    ``None`` when its cgroup is not found or not readable here: ask the daemon instead.
    """
    if len(container_id) != 64 or not all(c in "0123456789abcdef" for c in container_id):
        return None
    for directory in _candidates(container_id, attrs):
        try:
            return int((directory / "pids.current").read_text().strip())
        except (OSError, ValueError):
            continue
    return None


_MEMORY_FILES = ("memory.current", "memory.usage_in_bytes")
"""cgroup v2's, then v1's count of the memory the cgroup holds (page cache included)."""


def cgroup_memory_mib(container_id: str, attrs: Mapping[str, Any]) -> float | None:
    """The memory the container's cgroup holds, in MiB, as the kernel charges it.

    The very counter its memory limit is enforced on. ``None`` when its cgroup is not
    found or not readable here.
    """
    if len(container_id) != 64 or not all(c in "0123456789abcdef" for c in container_id):
        return None
    for directory in _candidates(container_id, attrs, "memory"):
        for name in _MEMORY_FILES:
            try:
                return int((directory / name).read_text().strip()) / 2**20
            except (OSError, ValueError):
                continue
    return None
