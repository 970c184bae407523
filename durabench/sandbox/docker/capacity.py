"""How many attempts one worker host runs at once, across every run and every worker.

A host admits an attempt (``claim_host``) only while fewer than its limit hold a claim.
An attempt holds its claim from admission until its container is removed. Claims are
counted from two sources, so a restarted worker neither forgets nor double-counts:

* the containers on this daemon labelled ``durabench.host=<host id>`` (the truth after a
  restart: they are the attempts still in flight), and
* reservations in memory for attempts admitted but not yet provisioned (their image may
  still be building), which expire after a while in case the attempt never comes back.

Both are keyed by the attempt's deterministic container name, so a retried claim or an
attempt that returns to the same host after a failover counts once.
"""

from __future__ import annotations

import threading
import time

import docker

from durabench.sandbox.docker.errors import map_docker_errors

__all__ = ["HOST_LABEL", "HostCapacity"]

HOST_LABEL = "durabench.host"
"""Container label naming the worker host that owns the container."""
_RESERVATION_TTL_S = 4 * 3600.0


class HostCapacity:
    """Admission of attempts to this host: at most ``limit`` at once."""

    def __init__(self, client: docker.DockerClient, host_id: str, limit: int) -> None:
        self._client = client
        self.host_id = host_id
        self.limit = limit
        self._reserved: dict[str, float] = {}
        self._lock = threading.Lock()

    def _containers(self) -> set[str]:
        with map_docker_errors("counting this host's sandboxes"):
            found = self._client.containers.list(
                all=True, filters={"label": f"{HOST_LABEL}={self.host_id}"}
            )
        return {str(c.name) for c in found}

    def holders(self) -> set[str]:
        """The attempts (container names) that hold a claim now. Blocking."""
        now = time.monotonic()
        with self._lock:
            self._reserved = {k: t for k, t in self._reserved.items() if t > now}
            reserved = set(self._reserved)
        return reserved | self._containers()

    def claim(self, name: str) -> bool:
        """Admit the attempt whose container is ``name``, if there is room. Blocking.

        Idempotent: an attempt that already holds a claim is admitted again.
        """
        holders = self.holders()
        with self._lock:
            if name not in holders and len(holders | set(self._reserved)) >= self.limit:
                return False
            self._reserved[name] = time.monotonic() + _RESERVATION_TTL_S
            return True

    def provisioned(self, name: str) -> None:
        """The attempt's container exists: it now counts as a container, not a reservation."""
        with self._lock:
            self._reserved.pop(name, None)

    def release(self, name: str) -> None:
        """The attempt's container is gone (or never came): its claim ends."""
        self.provisioned(name)
