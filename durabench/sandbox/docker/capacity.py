"""How many attempts one worker host runs at once, across every run and every worker.

A host admits an attempt (``claim_host``) only while fewer than its limit hold a claim.
An attempt holds its claim from admission until its container is removed. Claims are
counted from two sources, so a restarted worker neither forgets nor double-counts:

* the containers on this daemon labelled ``durabench.host=<host id>``: the attempts whose
  container exists, and
* reservations for attempts admitted but not yet provisioned (their image may still be
  building). They are kept in a file per host under ``DURABENCH_HOME``, so a restart
  remembers them, and expire in case the attempt never comes back: a claim lapses after
  :data:`_CLAIM_TTL_S` unless its provision begins here (its reply may have been lost, and
  the attempt claimed another host), then after :data:`_RESERVATION_TTL_S` (the build).

A remote backend's sandboxes are not on this host's daemon (which it may not have): its
host counts reservations alone (``client`` ``None``), each held from the claim until the
sandbox is removed, renewed for another :data:`_RESERVATION_TTL_S` when the sandbox starts.

With a :class:`MemoryRule`, a host also admits by memory
(:mod:`~durabench.sandbox.docker.memory_admission`): each container at what its cgroup
holds, measured at each claim, plus a growth allowance, never below its agent's floor
(:data:`FLOOR_LABEL`); each reservation at its floor.

Both are keyed by the attempt (run, task, lane, attempt number), not by its container:
an attempt that moved here from a lost host claims once, whatever its placement.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

import docker

from durabench.atomic import atomic_write
from durabench.documents import loads_json
from durabench.sandbox.admission import Admission, AdmissionFacts, sandbox_admission
from durabench.sandbox.docker.cgroup_count import cgroup_memory_mib, local_daemon
from durabench.sandbox.docker.cleanup import listed_containers
from durabench.sandbox.docker.memory_admission import HeldMemory, MemoryBudget, fits
from durabench.settings.values import Settings, host_memory_mib

__all__ = [
    "FLOOR_LABEL",
    "HOST_LABEL",
    "PLACEMENT_LABEL",
    "HostCapacity",
    "MemoryRule",
    "attempt_key",
    "docker_admission",
    "host_admits",
    "memory_rule",
]

HOST_LABEL = "durabench.host"
"""Container label naming the worker host that owns the container."""
FLOOR_LABEL = "durabench.memory-floor-mib"
"""Container label: its agent's working set in MiB, what it is counted at, at least."""
PLACEMENT_LABEL = "durabench.placement"
"""Container label: which placement of its attempt the container is (0 unless it moved)."""
_RESERVATION_TTL_S = 4 * 3600.0
"""How long an attempt whose provision began here holds its slot before its container."""
_CLAIM_TTL_S = 15 * 60.0
"""How long a claim holds a slot before its provision begins here (a host's queue answers
within its host timeout, 5 minutes by default, or the attempt claims again)."""
_KEY_LABELS = ("durabench.run", "durabench.task", "durabench.lane", "durabench.attempt")


def attempt_key(labels: Mapping[str, str]) -> str:
    """The attempt a container (or an attempt's labels) belongs to."""
    return "/".join(labels.get(name, "") for name in _KEY_LABELS)


class MemoryRule(NamedTuple):
    """Admission by memory: the host's budget, and the floor of an agent that names none."""

    budget: MemoryBudget
    default_floor_mib: float


def memory_rule(settings: Settings, host_mib: float | None) -> MemoryRule | None:
    """The memory rule of a host of ``host_mib`` (``None``: unknown, count only)."""
    if host_mib is None:
        return None
    reserve = max(1024.0, host_mib / 10)
    if settings.host_reserve_mb is not None:
        reserve = float(settings.host_reserve_mb)
    budget = MemoryBudget.of(
        host_mib,
        reserve,
        settings.max_verifiers,
        settings.sandbox_memory_mb,
        settings.sandbox_growth_mb,
    )
    return MemoryRule(budget, settings.sandbox_memory_mb / 4)


class HostCapacity:
    """Admission of attempts to this host: at most ``limit`` at once, and what fits in memory."""

    def __init__(
        self,
        client: docker.DockerClient | None,
        host_id: str,
        limit: int,
        state_file: Path,
        clock: Callable[[], float] = time.time,
        memory: MemoryRule | None = None,
    ) -> None:
        self._client = client
        self._clock = clock
        self.host_id = host_id
        self.limit = limit
        self.memory = memory
        self._file = state_file
        self._lock = threading.Lock()
        self._floors: dict[str, float] = {}

    def _floor(self, key: str, label: str | None = None) -> float:
        default = self.memory.default_floor_mib if self.memory else 0.0
        try:
            return float(label) if label is not None else self._floors.get(key, default)
        except ValueError:
            return default

    def _containers(self) -> dict[str, HeldMemory]:
        if self._client is None:  # a remote backend's: its reservations are its claims
            return {}
        found = listed_containers(self._client, f"{HOST_LABEL}={self.host_id}")
        local = local_daemon(self._client.api.base_url)
        out = {}
        for c in found:
            labels = c.get("Labels") or {}
            key = attempt_key(labels)
            running = local and c.get("State") == "running"
            measured = cgroup_memory_mib(str(c.get("Id", "")), {}) if running else None
            out[key] = HeldMemory(measured, self._floor(key, labels.get(FLOOR_LABEL)))
        return out

    def _fits(
        self,
        containers: dict[str, HeldMemory],
        reserved: dict[str, float],
        key: str,
        floor_mib: float | None,
    ) -> bool:
        if self.memory is None:
            return True
        waiting = [HeldMemory(None, self._floor(k)) for k in reserved if k not in containers]
        newcomer = HeldMemory(None, self._floor(key) if floor_mib is None else floor_mib)
        return fits(self.memory.budget, [*containers.values(), *waiting], newcomer)

    def _load(self) -> dict[str, float]:
        try:
            saved = loads_json(self._file.read_text())
        except (OSError, ValueError):
            return {}
        now = self._clock()
        return {str(k): float(t) for k, t in saved.items() if float(t) > now}

    def _save(self, reserved: dict[str, float]) -> None:
        atomic_write(self._file, json.dumps(reserved, indent=1, sort_keys=True))

    def holders(self) -> set[str]:
        """The attempts that hold a claim now. Blocking."""
        with self._lock:
            reserved = set(self._load())
        return reserved | set(self._containers())

    def claim(self, key: str, floor_mib: float | None = None) -> bool:
        """Admit attempt ``key`` if there is room: in count, and in memory. Blocking.

        ``floor_mib``: its agent's working set (``None``: the default floor).
        Idempotent: an attempt that already holds a claim is admitted again.
        """
        containers = self._containers()
        with self._lock:
            reserved = self._load()
            holders = set(containers) | set(reserved)
            if key not in holders and (
                len(holders) >= self.limit or not self._fits(containers, reserved, key, floor_mib)
            ):
                return False
            if floor_mib is not None:  # kept while it holds its claim (no label yet)
                self._floors[key] = floor_mib
            reserved[key] = max(reserved.get(key, 0.0), self._clock() + _CLAIM_TTL_S)
            self._save(reserved)
            return True

    def arrived(self, key: str) -> None:
        """The attempt's provision began here: its claim holds while its image builds."""
        with self._lock:
            reserved = self._load()
            reserved[key] = self._clock() + _RESERVATION_TTL_S
            self._save(reserved)

    def provisioned(self, key: str) -> None:
        """The attempt's container exists: it now counts as a container, not a reservation.

        A remote sandbox is not counted from a daemon: its reservation is renewed instead.
        """
        if self._client is None:
            self.arrived(key)
            return
        self.release(key)

    def release(self, key: str) -> None:
        """The attempt's container is gone (or never came): its claim ends."""
        with self._lock:
            reserved = self._load()
            if reserved.pop(key, None) is not None:
                self._save(reserved)
        self._floors.pop(key, None)


def host_admits(settings: Settings) -> int:
    """Sandboxes this host admits at once, as the plan tells it.

    By memory at the floor of an agent that names none (agents that hold less fit more),
    within the count.
    """
    rule = memory_rule(settings, host_memory_mib())
    if rule is None or rule.default_floor_mib <= 0:
        return settings.max_sandboxes
    by_memory = int(rule.budget.usable_mib // max(rule.default_floor_mib, rule.budget.growth_mib))
    return max(1, min(settings.max_sandboxes, by_memory))


@sandbox_admission("docker")
def docker_admission(facts: AdmissionFacts) -> Admission:
    """Each worker host seen admits what this one does (the same settings, as in compose)."""
    own = host_admits(facts.settings)
    hosts = sorted({*facts.hosts, facts.settings.host_id})
    how = (
        f"by memory, not CPUs: {facts.settings.sandbox_memory_mb // 4} MiB a sandbox until "
        "measured, agents that hold less fit more; DURABENCH_MAX_SANDBOXES caps it; agents "
        "mostly wait on the model, and verifiers, CPU-bound, run at most "
        f"{facts.settings.max_verifiers} at once per host, DURABENCH_MAX_VERIFIERS"
    )
    if len(hosts) == 1:
        return Admission(own, f"host {hosts[0]} admits {own} ({how})")
    return Admission(
        own * len(hosts),
        f"{len(hosts)} worker hosts × {own} ({how}; assumed of each; "
        "DURABENCH_SANDBOX_QUOTA sets the total)",
    )
