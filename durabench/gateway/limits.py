"""What one attempt, and the whole host, may hold of the gateway.

Every sandbox of a host talks to one gateway, and the sandbox is the attacker's: without
limits one attempt's idle connections or slow bodies exhaust what every other attempt
needs. The limits fall at three levels: the gateway's process (open files and memory:
what an agent exhausts there cannot reach the worker), a connection (per sandbox address
and in all; a stalled sender is dropped), and a request (per placeholder and in all).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from durabench.settings.values import Settings

__all__ = ["GatewayLimits"]


class GatewayLimits(BaseModel):
    """The gateway's limits; the worker's settings name each (``DURABENCH_GATEWAY_*``)."""

    model_config = ConfigDict(frozen=True)

    files: int = Field(default=16_384, ge=256)
    """Open files of the gateway's process (``RLIMIT_NOFILE``), at most the worker's own
    hard limit; each connection takes one, each upstream request another."""
    memory_mb: int = Field(default=2048, ge=128)
    """Memory the gateway's process may allocate, in MiB (``RLIMIT_DATA``): past it a
    request fails, or the process dies and is restarted; the worker's memory is its own."""
    connections: int = Field(default=4096, ge=1)
    """Open connections in all; past it a new one is closed at once (the worker's own
    health checks excepted)."""
    connections_per_peer: int = Field(default=64, ge=0)
    """Open connections from one address (a sandbox's own on the gateway network); 0: no
    such limit, for sandboxes that reach the gateway through one shared address."""
    requests: int = Field(default=1024, ge=1)
    """Requests in flight in all; past it a request gets 503 and its body is not read."""
    requests_per_attempt: int = Field(default=16, ge=1)
    """Requests in flight with one placeholder key; one more waits for one to end."""
    queue_timeout_sec: float = Field(default=30.0, gt=0)
    """How long a request past its attempt's limit waits; then 429 (an agent's CLI retries)."""
    header_timeout_sec: float = Field(default=30.0, gt=0)
    """A connection must finish sending a request's headers this long after it opened or
    its last answer ended; else it is closed (idle and slow senders alike)."""
    body_timeout_sec: float = Field(default=60.0, gt=0)
    """A request's whole body must arrive this long after its headers; else 408 and the
    connection is closed."""
    keep_alive_sec: float = Field(default=15.0, gt=0)
    """How long an idle connection is kept for the agent's next request."""
    backlog: int = Field(default=1024, ge=16)
    """Connections the kernel queues before the gateway accepts them."""
    linger_sec: float = Field(default=120.0, ge=0)
    """How long the gateway outlives the last worker that used it, so agents whose worker
    is restarting keep their model; 0: it stops with that worker."""

    @classmethod
    def of(cls, settings: Settings) -> GatewayLimits:
        """The limits the worker's settings name (``gateway_<field>``)."""
        return cls(**{name: getattr(settings, f"gateway_{name}") for name in cls.model_fields})
