"""The gateway's own process: ``python -m durabench.gateway``, started by a worker's supervisor.

It is a process apart so that nothing an agent does to it (thousands of connections,
huge or stalled bodies) reaches a worker's event loop, file table or memory. Before it
serves it lowers its own limits: open files (``RLIMIT_NOFILE``) and memory
(``RLIMIT_DATA``, which counts what the process writes, heap and anonymous maps, not the
address space its libraries reserve, so it works unprivileged and without cgroups, in CI
as in a container). The limits are set here rather than in a ``preexec_fn``, which is
unsafe in the worker's threaded process; nothing is served before they hold.

What it needs comes from its supervisor: the listening socket (inherited, already bound
to the fixed port), a :class:`ProcessSpec` in ``DURABENCH_GATEWAY_SPEC`` (no secret),
and the keys in its environment, read by name on each request. It stops on SIGTERM, and
by itself once no worker of its code version has held a lease on it for the linger time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import logging.handlers
import os
import resource
import socket
import time
from pathlib import Path

import httpx
import uvicorn
from pydantic import BaseModel, ConfigDict

from durabench.gateway.app import GatewayApp
from durabench.gateway.connections import limited_protocol
from durabench.gateway.grants import GrantStore
from durabench.gateway.guard import LimitedApp
from durabench.gateway.inflight import InFlight
from durabench.gateway.keys import KeyRing
from durabench.gateway.limits import GatewayLimits
from durabench.gateway.providers import PROVIDERS
from durabench.gateway.upstream import UpstreamClients
from durabench.settings.environment import GATEWAY_SPEC_ENV, take_gateway_spec

__all__ = [
    "LEASE_TTL_S",
    "SPEC_ENV",
    "ProcessSpec",
    "code_version",
    "fresh_leases",
    "main",
    "server_config",
    "store_id",
]

SPEC_ENV = GATEWAY_SPEC_ENV
LEASE_TTL_S = 20.0
"""A worker's lease on the gateway is fresh this long after it was last touched."""
_WATCH_S = 1.0
_FORGET_S = 86_400.0
"""A lease untouched this long is removed (its worker was killed and never came back)."""
_TIMEOUT = httpx.Timeout(connect=30.0, read=900.0, write=60.0, pool=60.0)
"""A model may think for minutes before its first byte; a dead upstream fails fast."""
_KEPT_PER_ATTEMPT = 4
"""Idle connections kept per attempt for its next request (its own; see :mod:`.upstream`)."""
_LOG_BYTES = 8 << 20
"""The gateway's log is kept to two files of this size: a flood cannot fill the disk."""


class ProcessSpec(BaseModel):
    """What a gateway process serves, as its supervisor hands it over (no secret in it)."""

    model_config = ConfigDict(frozen=True)

    root: Path
    """The grant store (and the leases, and the log)."""
    accounts_file: Path
    """Where leased accounts' keys are named."""
    fd: int
    """The inherited listening socket."""
    limits: GatewayLimits


@functools.cache
def code_version() -> str:
    """A digest of the gateway's code as this process loaded it, so a stale one is seen."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def store_id(root: Path) -> str:
    """The grant store's identity, as ``/healthz`` tells it (not its path: sandboxes ask)."""
    return hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]


def fresh_leases(root: Path, now: float | None = None) -> dict[str, str]:
    """Leases touched within :data:`LEASE_TTL_S`: file name to the code version it wants."""
    now = time.time() if now is None else now
    found = {}
    for path in (root / "leases").glob("*.lease"):
        try:
            if now - path.stat().st_mtime <= LEASE_TTL_S:
                found[path.name] = path.read_text().strip()
        except OSError:
            continue  # removed as we looked
    return found


def _limit_self(limits: GatewayLimits) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = limits.files if hard == resource.RLIM_INFINITY else min(limits.files, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    memory = limits.memory_mb << 20
    resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))


def _log_to(root: Path) -> None:
    handler = logging.handlers.RotatingFileHandler(
        root / "gateway.log", maxBytes=_LOG_BYTES, backupCount=1
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


async def _watch_leases(root: Path, linger_s: float, server: uvicorn.Server) -> None:
    """Stop once no worker of this code version has held a lease for ``linger_s``."""
    held = time.time()
    while not server.should_exit:
        await asyncio.sleep(_WATCH_S)
        now = time.time()
        for path in (root / "leases").glob("*"):  # of workers killed long ago (mid-write too)
            with contextlib.suppress(OSError):
                if now - path.stat().st_mtime > _FORGET_S:
                    path.unlink()
        if code_version() in fresh_leases(root, now).values():
            held = now
        elif now - held > linger_s:
            logging.getLogger(__name__).warning("no worker holds the gateway: it stops")
            server.should_exit = True


def server_config(
    app: GatewayApp, limits: GatewayLimits, health: dict[str, object]
) -> uvicorn.Config:
    """How uvicorn serves ``app`` in the gateway's process (and in the tests that attack it).

    Its HTTP/1.1 is h11 held stricter still (:mod:`.connections`); no WebSocket upgrade,
    no proxy headers, no server header.
    """
    return uvicorn.Config(
        LimitedApp(app, limits, health, app.overloaded),
        http=limited_protocol(limits, app.malformed),
        ws="none",
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=max(1, round(limits.keep_alive_sec)),
        limit_concurrency=limits.connections + limits.requests,
        timeout_graceful_shutdown=5,
        proxy_headers=False,  # no proxy in front: a sandbox names no address but its own
        server_header=False,
    )


async def serve(spec: ProcessSpec) -> None:
    """Serve on the inherited socket until told to stop, or until no worker holds a lease."""
    limits = spec.limits
    sock = socket.socket(fileno=spec.fd)
    keys = KeyRing(spec.accounts_file, os.environ)
    pool = httpx.Limits(
        max_connections=limits.requests_per_attempt, max_keepalive_connections=_KEPT_PER_ATTEMPT
    )
    clients = UpstreamClients(
        lambda: httpx.AsyncClient(timeout=_TIMEOUT, follow_redirects=False, limits=pool)
    )
    upstreams = {name: provider.upstream(os.environ) for name, provider in PROVIDERS.items()}
    inflight = InFlight(spec.root)
    store = GrantStore(spec.root)
    app = GatewayApp(store, keys.secret, keys.mcp, upstreams, clients, inflight)
    health: dict[str, object] = {
        "gateway": "durabench",
        "version": code_version(),
        "pid": os.getpid(),
        "store": store_id(spec.root),
    }
    server = uvicorn.Server(server_config(app, limits, health))
    watcher = asyncio.create_task(_watch_leases(spec.root, limits.linger_sec, server))
    try:
        await server.serve(sockets=[sock])
    finally:
        watcher.cancel()
        await clients.aclose()
    inflight.close()  # served to the end: nothing was cut


def main() -> None:
    """The process's entry point: limits first, then serve."""
    spec = ProcessSpec.model_validate_json(take_gateway_spec())
    _limit_self(spec.limits)
    _log_to(spec.root)
    asyncio.run(serve(spec))
