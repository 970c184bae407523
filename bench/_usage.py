"""Where a bench's CPU goes, and what its worker holds: read from ``/proc`` and cgroups.

The concurrency bench splits the machine's busy time over a run into the worker (with the
processes it starts: the gateway, and any it has reaped), the Temporal dev server, the
bench's own process, the sandboxes (the ``docker`` cgroup's ``cpuacct.usage``, which keeps
the CPU of removed containers), the Docker daemon (``dockerd``, ``containerd``), the
containers' shims, and the rest: other work on the machine. All but the shims are
cumulative counters read before and after; :class:`ResourceWatch` samples the shims (see
``SHIM``) and what is not cumulative (open files, threads, memory), every
``SAMPLE_EVERY_S`` seconds.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import docker
from _load import LoadWatch, OwnCpu

__all__ = [
    "COMPOSE_DIR",
    "Accounted",
    "Cpu",
    "ResourcePeaks",
    "ResourceWatch",
    "cpu_now",
    "is_own_container",
]

TICK = os.sysconf("SC_CLK_TCK")
DOCKER_CGROUP = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")
"""Every container's CPU nanoseconds, kept after removal (cgroup v1, cgroupfs driver)."""
DAEMON = ("dockerd", "containerd", "docker-proxy")
"""The Docker daemon's long-lived processes, each with the children it has reaped: dockerd
re-executes itself for every archive copy into or out of a container (``docker-tar``,
``docker-untar``), runs ``ps`` for a ``top`` and ``set-ipv6`` for a network sandbox, and
those are most of its CPU for an attempt."""
SHIM = "containerd-shim"
"""One per container. Its own CPU only: what it reaps is the container's processes (in the
sandboxes' cgroup already) and the ``runc`` calls (create, start, each exec, delete), which
cannot be told apart from them, so those land in "other work". Pid 1 reaps the shim with
its container, so its CPU cannot be read after: it is read at each sample instead
(:class:`ResourceWatch`), missing at most a sample's interval of each. What is missed only
makes the load guard stricter."""
SAMPLE_EVERY_S = 2.0


@dataclass(frozen=True)
class Cpu:
    """CPU-seconds used so far, by where (see the module's docstring)."""

    machine: float
    """The whole machine's busy time: everything but idle and iowait (steal included)."""
    sandboxes: float
    daemon: float
    worker: float
    server: float
    bench: float
    shims: float = 0.0
    """The containers' shims' (sampled while they ran: :data:`SHIM`; 0 from :func:`cpu_now`)."""

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    @property
    def run(self) -> float:
        """What the run used: its sandboxes, the daemon, the worker, the server, the bench."""
        return self.sandboxes + self.daemon + self.shims + self.worker + self.server + self.bench

    @property
    def others(self) -> float:
        """What the rest of the machine used meanwhile (other users, steal); at least 0."""
        return max(self.machine - self.run, 0.0)


COMPOSE_DIR = "com.docker.compose.project.working_dir"
"""The label Compose gives each container: its project's directory."""


def is_own_container(
    labels: dict[str, str], run_ids: set[str], compose_under: Path | None = None
) -> bool:
    """Whether a container is a bench's own, from its labels.

    Its own are those of its durabench runs (``durabench.run``) and, with ``compose_under``,
    the Compose projects whose directory lies under that directory (Harbor's trials on the
    bench's task copies: a fresh temp directory, so no one else's).
    """
    if labels.get("durabench.run") in run_ids:
        return True
    where = labels.get(COMPOSE_DIR)
    if compose_under is None or where is None:
        return False
    return where.startswith(f"{compose_under}/")


@dataclass(frozen=True)
class _Proc:
    pid: int
    ppid: int
    comm: str
    cpu: float
    """Its own CPU-seconds and those of the children it has reaped (gone from /proc)."""
    own: float
    """Its own CPU-seconds alone."""


def _processes() -> dict[int, _Proc]:
    found: dict[int, _Proc] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        rest = text.rsplit(")", 1)[1].split()
        own = int(rest[11]) + int(rest[12])  # utime stime
        reaped = int(rest[13]) + int(rest[14])  # cutime cstime
        pid = int(stat.parent.name)
        comm = text[text.index("(") + 1 : text.rindex(")")]
        found[pid] = _Proc(pid, int(rest[1]), comm, (own + reaped) / TICK, own / TICK)
    return found


def _tree_cpu(procs: dict[int, _Proc], root: int) -> float:
    """CPU-seconds of ``root`` and every live descendant (with what each has reaped)."""
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            total += procs[pid].cpu
        todo += children.get(pid, [])
    return total


def cpu_now(worker_pid: int) -> Cpu:
    """CPU-seconds so far: the machine's busy time and the run's parts (module docstring).

    The server is every other live child of this process (the dev server); the bench is
    this process with the children it has reaped (Harbor, in ``peer_harbor.py``).
    """
    stat = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    # user nice system idle iowait irq softirq steal (guest is counted in user already)
    machine = (sum(stat[:8]) - stat[3] - stat[4]) / TICK
    sandboxes = int(DOCKER_CGROUP.read_text()) / 1e9 if DOCKER_CGROUP.exists() else 0.0
    procs = _processes()
    me = os.getpid()
    daemon = sum(p.cpu for p in procs.values() if p.comm in DAEMON)
    worker = _tree_cpu(procs, worker_pid)
    server = sum(
        _tree_cpu(procs, p.pid) for p in procs.values() if p.ppid == me and p.pid != worker_pid
    )
    own = os.times()
    bench = own.user + own.system + own.children_user + own.children_system
    return Cpu(machine, sandboxes, daemon, worker, server, bench)


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line)


def _kib(value: str) -> int:
    return int(value.split()[0])


@dataclass
class ResourcePeaks:
    """The most seen at once while a run ran (``ResourceWatch``)."""

    worker_rss_mib: float = 0.0
    """The worker process's own peak resident memory (``VmHWM``; the gateway apart)."""
    worker_fds: int = 0
    worker_threads: int = 0
    tree_rss_mib: float = 0.0
    """The worker with the processes it started (the gateway), sampled."""
    daemon_fds: int = 0
    daemon_threads: int = 0
    shims: int = 0
    """``containerd-shim`` processes: one per running container."""
    min_available_mib: float = field(default=float("inf"))
    """The least ``MemAvailable`` of the machine."""

    def describe(self) -> str:
        """One line per kind, for the bench's output."""
        return (
            f"worker RSS peak {self.worker_rss_mib:.0f} MiB (with the gateway, sampled:"
            f" {self.tree_rss_mib:.0f} MiB), {self.worker_fds} open files,"
            f" {self.worker_threads} threads\n"
            f"        docker daemon: {self.daemon_fds} open files, {self.daemon_threads} threads,"
            f" {self.shims} container shims at once; machine memory available at least"
            f" {self.min_available_mib:.0f} MiB"
        )


class ResourceWatch:
    """Samples the worker's and the daemon's files, threads and memory while a block runs.

    With ``ours`` (a test of a container's labels), it also notes every container not the
    bench's (``foreign``) that was running at a sample or started meanwhile (Docker's event
    stream: a container that lives less than a sample's interval is seen too): their CPU
    would count as the run's sandboxes'.
    """

    def __init__(
        self,
        worker_pid: int,
        ours: Callable[[dict[str, str]], bool] | None = None,
        every_s: float = SAMPLE_EVERY_S,
    ) -> None:
        self.worker_pid = worker_pid
        self.ours = ours
        self.every_s = every_s
        self.peaks = ResourcePeaks()
        self.foreign: set[str] = set()
        self._docker = docker.from_env() if ours is not None else None
        self._watch = LoadWatch(every_s, read=self._read)
        """Samples at the start, every ``every_s`` seconds, and at the end."""
        self._sampled = False
        self._shim_cpu: dict[int, tuple[float, float]] = {}
        """Each shim seen: its CPU when first seen (0 if it began meanwhile), and last seen."""
        self._events: Any = None
        self._listener = threading.Thread(target=self._listen, daemon=True)

    def _listen(self) -> None:
        """Note each container started meanwhile that is not the bench's, until closed."""
        try:
            for event in self._events:
                attributes = (event.get("Actor") or {}).get("Attributes") or {}
                if self.ours is not None and not self.ours(attributes):
                    self.foreign.add(str(attributes.get("name") or event.get("id", "?")[:12]))
        except Exception:  # closed at the end (or the daemon went away): stop listening
            return

    def sample(self) -> None:
        """Read once; keep the highest of each (the lowest memory available)."""
        p = self.peaks
        procs = _processes()
        try:
            status = _status(self.worker_pid)
            p.worker_rss_mib = max(p.worker_rss_mib, _kib(status["VmHWM"]) / 1024)
            p.worker_threads = max(p.worker_threads, int(status["Threads"]))
            p.worker_fds = max(p.worker_fds, _count_fds(self.worker_pid))
            tree = [self.worker_pid] + [q.pid for q in procs.values() if q.ppid == self.worker_pid]
            rss = sum(_kib(_status(pid).get("VmRSS", "0 kB")) for pid in tree)
            p.tree_rss_mib = max(p.tree_rss_mib, rss / 1024)
        except (OSError, KeyError):  # the worker is gone: keep what was seen
            pass
        daemon = [q.pid for q in procs.values() if q.comm in ("dockerd", "containerd")]
        p.daemon_fds = max(p.daemon_fds, sum(_count_fds(pid) for pid in daemon))
        p.daemon_threads = max(p.daemon_threads, sum(_threads(pid) for pid in daemon))
        shims = {q.pid: q.own for q in procs.values() if q.comm.startswith(SHIM)}
        p.shims = max(p.shims, len(shims))
        for pid, cpu in shims.items():
            base, _ = self._shim_cpu.get(pid, (0.0 if self._sampled else cpu, 0.0))
            self._shim_cpu[pid] = (base, cpu)
        self._sampled = True
        self._containers()
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        available = next(_kib(x.split(":")[1]) for x in meminfo if x.startswith("MemAvailable"))
        p.min_available_mib = min(p.min_available_mib, available / 1024)

    def _containers(self) -> None:
        if self._docker is None or self.ours is None:
            return
        for c in self._docker.containers.list(sparse=True):
            if not self.ours(c.attrs.get("Labels") or {}):
                names = c.attrs.get("Names") or [str(c.id)[:12]]
                self.foreign.add(str(names[0]).lstrip("/"))

    @property
    def shim_cpu(self) -> float:
        """CPU-seconds the shims seen used while the watch ran (a lower bound)."""
        return sum(last - base for base, last in self._shim_cpu.values())

    def _read(self) -> float:
        self.sample()
        return 0.0

    def __enter__(self) -> ResourceWatch:
        if self._docker is not None:
            starts = {"type": "container", "event": "start"}
            self._events = self._docker.events(decode=True, filters=starts)
            self._listener.start()
        self._watch.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._watch.__exit__(None, None, None)
        if self._docker is not None:
            self._events.close()
            self._listener.join(timeout=5)
            self._docker.close()


def _count_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _threads(pid: int) -> int:
    try:
        return int(_status(pid)["Threads"])
    except (OSError, KeyError):
        return 0


class Accounted:
    """A block's CPU split (:func:`cpu_now` before and after) and what it held, watched.

    ``with Accounted(worker_pid, ours) as acc: ...``, then ``acc.cpu``, ``acc.peaks``,
    ``acc.foreign`` and, for the load guard, ``acc.own()``.
    """

    def __init__(self, worker_pid: int, ours: Callable[[dict[str, str]], bool]) -> None:
        self.worker_pid = worker_pid
        self.watch = ResourceWatch(worker_pid, ours)
        self.cpu = Cpu(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        self.seconds = 0.0
        self._before = self.cpu
        self._began = 0.0

    @property
    def peaks(self) -> ResourcePeaks:
        """The most the worker and the daemon held during the block."""
        return self.watch.peaks

    @property
    def foreign(self) -> tuple[str, ...]:
        """Containers not the bench's seen running during the block, by name."""
        return tuple(sorted(self.watch.foreign))

    def own(self) -> OwnCpu:
        """For :func:`_load.judge_own`: the CPU other work took, over how long, what ran."""
        return OwnCpu(self.cpu.others, self.seconds, self.foreign)

    def __enter__(self) -> Accounted:
        self._before = cpu_now(self.worker_pid)
        self._began = time.monotonic()
        self.watch.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.watch.__exit__()
        self.seconds = time.monotonic() - self._began
        cpu = cpu_now(self.worker_pid) - self._before
        self.cpu = dataclasses.replace(cpu, shims=self.watch.shim_cpu)
