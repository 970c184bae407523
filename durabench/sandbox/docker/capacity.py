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

Both are keyed by the attempt (run, task, lane, attempt number), not by its container:
an attempt that moved here from a lost host claims once, whatever its placement.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import docker

from durabench.atomic import atomic_write
from durabench.documents import loads_json
from durabench.sandbox.admission import Admission, AdmissionFacts, sandbox_admission
from durabench.sandbox.docker.cleanup import listed_containers

__all__ = ["HOST_LABEL", "PLACEMENT_LABEL", "HostCapacity", "attempt_key", "docker_admission"]

HOST_LABEL = "durabench.host"
"""Container label naming the worker host that owns the container."""
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


class HostCapacity:
    """Admission of attempts to this host: at most ``limit`` at once."""

    def __init__(
        self,
        client: docker.DockerClient | None,
        host_id: str,
        limit: int,
        state_file: Path,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._clock = clock
        self.host_id = host_id
        self.limit = limit
        self._file = state_file
        self._lock = threading.Lock()

    def _containers(self) -> set[str]:
        if self._client is None:  # a remote backend's: its reservations are its claims
            return set()
        found = listed_containers(self._client, f"{HOST_LABEL}={self.host_id}")
        return {attempt_key(c.get("Labels") or {}) for c in found}

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
        return reserved | self._containers()

    def claim(self, key: str) -> bool:
        """Admit attempt ``key`` if there is room. Blocking.

        Idempotent: an attempt that already holds a claim is admitted again.
        """
        containers = self._containers()
        with self._lock:
            reserved = self._load()
            holders = containers | set(reserved)
            if key not in holders and len(holders) >= self.limit:
                return False
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


@sandbox_admission("docker")
def docker_admission(facts: AdmissionFacts) -> Admission:
    """Each worker host seen admits what this one does (the same settings, as in compose)."""
    own = facts.settings.max_sandboxes
    hosts = sorted({*facts.hosts, facts.settings.host_id})
    if len(hosts) == 1:
        return Admission(own, f"host {hosts[0]} admits {own} (DURABENCH_MAX_SANDBOXES)")
    return Admission(
        own * len(hosts),
        f"{len(hosts)} worker hosts × {own} (DURABENCH_MAX_SANDBOXES of {facts.settings.host_id},"
        " assumed of each; DURABENCH_SANDBOX_QUOTA sets the total)",
    )
