"""Who a worker is and where it runs, in its identity: enough for a peer to tell it is dead.

Workers of one host (one Docker daemon) may run side by side: ``worker.py`` and the
in-process worker of ``starter run`` on the machine, or replicas in sibling containers
that share a host id. A restarted worker ends the attempts a dead peer left started
(:mod:`runtime.orphans`), and must never take a live one for dead: that fails an
attempt that is running. A pid alone cannot say: containers number their processes
alike, and a pid is reused. So the identity also records

* the boot id (``/proc/sys/kernel/random/boot_id``): another one means the machine
  restarted since, and every process of that boot is gone;
* the pid namespace (the inode of ``/proc/self/ns/pid``): only within the same one does
  a pid name the same process, and then its start time (``/proc/<pid>/stat``) tells it
  from a later process that got its number;
* the container, hashed: its id, read from the bind mounts Docker makes for it (its
  ``/etc/hostname`` lives under ``/var/lib/docker/containers/<id>/``), else the node
  name. A container keeps its id across restarts, each start in a new pid namespace, so
  a peer of this container in another namespace was an earlier life of it. Replicas
  with ``network_mode: host`` share the host's name, never their ids.

What cannot be told is taken for alive: a peer in a sibling container, or a worker of a
version that recorded none of this, is left to its heartbeat timeout, the safe default.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import string
from pathlib import Path
from typing import NamedTuple

__all__ = ["WorkerPlace", "dead_peer", "identity_at", "this_place"]

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_SHAPE = re.compile(r"(\d+)-([0-9a-f]+)-(\d*)-(\d*)-([0-9a-f]*)-([0-9a-f]*)")
"""``pid-token-start-pidns-boot-node``; the last four empty where ``/proc`` is absent."""
_CONTAINER = re.compile(r"/containers/([0-9a-f]{64})/")
"""A Docker container's id in the source of one of its bind mounts (``/proc/self/mountinfo``)."""


class WorkerPlace(NamedTuple):
    """A worker process and where it runs; empty strings where the system does not say."""

    pid: int
    started: str
    """The process's start time, clock ticks after boot (``/proc/<pid>/stat`` field 22)."""
    pid_ns: str
    """The inode of its pid namespace."""
    boot: str
    """The first 12 hex digits of the boot id."""
    node: str
    """8 hex digits of a hash of the container's id (outside a container, the node name)."""


def _read(path: Path | str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _start_time(pid: int) -> str | None:
    """``pid``'s start time as ``/proc`` says it; ``None`` when no such process runs."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


def _pid_ns() -> str:
    try:
        link = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return "".join(c for c in link if c in string.digits)


def this_place() -> WorkerPlace:
    """This process and where it runs."""
    pid = os.getpid()
    found = _CONTAINER.search(_read("/proc/self/mountinfo"))
    name = found.group(1) if found else socket.gethostname()
    node = hashlib.sha256(name.encode()).hexdigest()[:8]
    boot = _read(_BOOT_ID).strip().replace("-", "")[:12]
    return WorkerPlace(pid, _start_time(pid) or "", _pid_ns(), boot, node)


def identity_at(place: WorkerPlace, host_id: str, token: str | None = None) -> str:
    """A worker identity at ``place`` of ``host_id``; ``token`` keeps identities apart."""
    token = token or secrets.token_hex(3)
    p = place
    return f"{p.pid}-{token}-{p.started}-{p.pid_ns}-{p.boot}-{p.node}@{host_id}"


def _place_of(identity: str, host_id: str) -> WorkerPlace | None:
    found = _SHAPE.fullmatch(identity.removesuffix(f"@{host_id}"))
    if found is None:
        return None
    pid, _, started, pid_ns, boot, node = found.groups()
    return WorkerPlace(int(pid), started, pid_ns, boot, node)


def _gone(pid: int, started: str) -> bool:
    """Whether process ``pid`` of this pid namespace, started at ``started``, has ended."""
    now = _start_time(pid)
    if now is None:
        return not _signalable(pid)
    return bool(now and started and now != started)


def _signalable(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_peer(started_by: str, host_id: str, here: WorkerPlace | None = None) -> bool:
    """Whether the worker ``started_by`` of ``host_id`` is known to be dead, seen from ``here``.

    ``False`` whenever it cannot be told (see the module docstring).
    """
    peer = _place_of(started_by, host_id)
    if peer is None:
        return False
    here = here or this_place()
    if not (peer.boot or here.boot):  # no /proc on either side: one process table
        return not _signalable(peer.pid)
    if not (peer.boot and here.boot):
        return False
    if peer.boot != here.boot:
        return True
    if peer.pid_ns and peer.pid_ns == here.pid_ns:
        return _gone(peer.pid, peer.started)
    known = peer.node and peer.pid_ns and here.pid_ns
    return bool(known) and peer.node == here.node  # an earlier life of this container
