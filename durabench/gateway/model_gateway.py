"""The model gateway of one worker host, as a worker sees it: started with the first need.

The gateway runs in a process of its own (:mod:`.process`), supervised by each worker
that uses it (:mod:`.supervisor`). It listens on the host's address on the gateway
network (:mod:`.network`), on a fixed port, so an agent re-attached after a worker
restart still finds it; another worker of this host (sharing the daemon and the home)
uses the same one, as grants are files either can write.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Mapping
from pathlib import Path

from durabench.gateway.grants import Grant, GrantStore
from durabench.gateway.inflight import serving_ledgers
from durabench.gateway.keys import KeyRing
from durabench.gateway.limits import GatewayLimits
from durabench.gateway.network import ensure_gateway_network
from durabench.gateway.revocation import CANCEL_AFTER_S
from durabench.gateway.supervisor import GatewaySupervisor
from durabench.sandbox import shared_docker_client
from durabench.settings.values import Settings

__all__ = ["ModelGateway"]


DRAIN_S = CANCEL_AFTER_S + 15.0
"""How long the worker waits for an ended attempt's requests in flight to be ledgered."""
_DRAIN_POLL_S = 0.2
_STARTED: weakref.WeakSet[ModelGateway] = weakref.WeakSet()
"""Gateways this process holds, for :meth:`ModelGateway.close_all`."""


class ModelGateway:
    """This host's gateway: its address, its grants, this worker's supervision of it."""

    @staticmethod
    async def close_all() -> None:
        """Let go of every gateway this process holds on the running loop (the worker stops)."""
        loop = asyncio.get_running_loop()
        for gateway in list(_STARTED):
            if gateway._loop is loop:
                await gateway.aclose()

    @classmethod
    def of(cls, settings: Settings, environ: Mapping[str, str]) -> ModelGateway:
        """This host's gateway as a worker's settings place and limit it."""
        return cls(
            settings.home / "gateway",
            settings.gateway_network,
            settings.gateway_port,
            settings.accounts_file,
            environ,
            limits=GatewayLimits.of(settings),
        )

    def __init__(
        self,
        root: Path,
        network: str,
        port: int,
        accounts_file: Path,
        environ: Mapping[str, str],
        *,
        bind_host: str | None = None,
        limits: GatewayLimits | None = None,
    ) -> None:
        """``bind_host`` listens there instead of on the gateway network (tests: loopback)."""
        self.store = GrantStore(root)
        self.bind_host = bind_host
        self.network = network
        self.port = port
        self.keys = KeyRing(accounts_file, environ)
        self.supervisor = GatewaySupervisor(root, accounts_file, environ, limits or GatewayLimits())
        self._url: str | None = None
        self._watch: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None

    async def url(self) -> str:
        """The gateway's base URL as sandboxes reach it; starts it on first use.

        Raises:
            SandboxError: the gateway network is unusable, the port is held by something
                that is not this home's gateway, or the gateway did not start.
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._lock is None:  # a new event loop: a watch of its own
            self._loop, self._lock, self._url, self._watch = loop, asyncio.Lock(), None, None
        async with self._lock:
            if self._url is not None:  # a gateway that died is restarted before it is handed out
                await self.supervisor.check(self._url, probe=False)
            if self._url is None:
                host = self.bind_host
                if host is None:
                    client = shared_docker_client()
                    host = await asyncio.to_thread(ensure_gateway_network, client, self.network)
                self._url = await self.supervisor.ensure(host, self.port)
                self._watch = loop.create_task(self.supervisor.watch(self._url, self._lock))
                _STARTED.add(self)
        return self._url

    async def settle(self) -> None:
        """Restart a gateway of this worker's that died, writing its outage first.

        Called before an attempt's ledger is read: the session a dying gateway cut may end
        before the watch notices the exit, and its ledger must say so when it is judged.
        """
        if self._url is None or self._lock is None or self._loop is not asyncio.get_running_loop():
            return
        async with self._lock:
            await self.supervisor.check(self._url, probe=False)

    async def drained(self, ledger: Path, timeout: float = DRAIN_S) -> bool:
        """Wait until the gateway serves no request of ``ledger``'s attempt; whether it did.

        Its grant is revoked first: what is still in flight ends on its own or is cancelled
        (:mod:`.revocation`), so its ledger line is written before the ledger is read.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while str(ledger) in await asyncio.to_thread(serving_ledgers, self.store.root):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(_DRAIN_POLL_S)
        return True

    @property
    def environ(self) -> Mapping[str, str]:
        """Where the keys are read: this worker's environment, and the gateway's once it starts."""
        return self.keys.environ

    @environ.setter
    def environ(self, environ: Mapping[str, str]) -> None:
        """A new environment, for this worker now and for the gateway when it next starts."""
        self.keys.environ = self.supervisor.environ = environ

    @property
    def pid(self) -> int | None:
        """The gateway process this worker started and supervises, while it runs."""
        return self.supervisor.pid

    async def aclose(self) -> None:
        """Let go of the gateway: it stops unless another worker holds it, or it lingers."""
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await asyncio.to_thread(self.supervisor.release)
        self._url = self._watch = None
        _STARTED.discard(self)

    def key_variable(self, grant: Grant) -> str | None:
        """The variable the agent reads its key from (see :meth:`KeyRing.key_variable`)."""
        return self.keys.key_variable(grant)
