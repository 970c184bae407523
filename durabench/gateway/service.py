"""The model gateway of one worker host: started with the first attempt that needs it.

It listens on the host's address on the gateway network (:mod:`.network`), on a fixed
port, so an agent re-attached after a worker restart still finds it. When the port is
already taken by another durabench gateway of this host (another worker process sharing
the daemon and the home), that one serves: grants are files, so either can.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import weakref
from collections.abc import Mapping
from pathlib import Path

import httpx
import uvicorn

from durabench.accounts import find_account, load_accounts, secret_of
from durabench.accounts.file import agent_env as account_variable
from durabench.agents import get_agent
from durabench.errors import AccountError, SandboxError
from durabench.gateway.app import GatewayApp
from durabench.gateway.grants import Grant, GrantStore
from durabench.gateway.network import ensure_gateway_network
from durabench.gateway.providers import PROVIDERS
from durabench.sandbox import shared_docker_client

__all__ = ["ModelGateway"]

_TIMEOUT = httpx.Timeout(connect=30.0, read=900.0, write=60.0, pool=60.0)
"""A model may think for minutes before its first byte; a dead upstream fails fast."""


_STARTED: weakref.WeakSet[ModelGateway] = weakref.WeakSet()
"""Gateways serving in this process, for :meth:`ModelGateway.close_all`."""


class ModelGateway:
    """This host's gateway: its address, its grants, its server task."""

    @staticmethod
    async def close_all() -> None:
        """Stop every gateway this process serves on the running loop (the worker stops)."""
        loop = asyncio.get_running_loop()
        for gateway in list(_STARTED):
            if gateway._loop is loop:
                await gateway.aclose()

    def __init__(
        self,
        root: Path,
        network: str,
        port: int,
        accounts_file: Path,
        environ: Mapping[str, str],
        *,
        bind_host: str | None = None,
    ) -> None:
        """``bind_host`` listens there instead of on the gateway network (tests: loopback)."""
        self.store = GrantStore(root)
        self.bind_host = bind_host
        self.network = network
        self.port = port
        self.accounts_file = accounts_file
        self.environ = environ
        self._url: str | None = None
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None

    async def url(self) -> str:
        """The gateway's base URL as sandboxes reach it; starts it on first use.

        Raises:
            SandboxError: the gateway network is unusable, or the port is held by
                something that is not a durabench gateway.
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (tests): a server of its own
            self._loop, self._lock, self._url = loop, asyncio.Lock(), None
        assert self._lock is not None
        async with self._lock:
            if self._url is not None and self._server is None and not await _is_gateway(self._url):
                self._url = None  # the other worker's gateway we used is gone: serve here
            if self._url is None:
                self._url = await self._start()
        return self._url

    async def _start(self) -> str:
        host = await asyncio.to_thread(ensure_gateway_network, shared_docker_client(), self.network)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, self.port))
        except OSError as exc:
            sock.close()
            url = f"http://{host}:{self.port}"
            if await _is_gateway(url):
                return url
            raise SandboxError(
                f"the model gateway cannot listen on {host}:{self.port} ({exc.strerror}); "
                "free the port or set DURABENCH_GATEWAY_PORT to another one"
            ) from None
        sock.listen(256)
        port = sock.getsockname()[1]
        self._client = httpx.AsyncClient(timeout=_TIMEOUT, follow_redirects=False)
        app = GatewayApp(
            self.store,
            self._secret,
            self._mcp,
            {name: provider.upstream(self.environ) for name, provider in PROVIDERS.items()},
            self._client,
        )
        config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        _STARTED.add(self)
        while not self._server.started and not self._task.done():
            await asyncio.sleep(0.01)
        return f"http://{host}:{port}"

    async def aclose(self) -> None:
        """Stop serving (agents still running find the next worker's gateway)."""
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(Exception):
                await self._task
        if self._client is not None:
            await self._client.aclose()
        self._url = self._server = self._task = self._client = None
        _STARTED.discard(self)

    def _secret(self, grant: Grant) -> tuple[str, str]:
        """The real key: the leased account's, else the worker's own."""
        if grant.account is not None:
            try:
                spec = find_account(
                    load_accounts(self.accounts_file), grant.account, self.accounts_file
                )
                return account_variable(spec), secret_of(spec, self.environ)
            except AccountError as exc:
                raise LookupError(str(exc)) from None
        agent = get_agent(grant.agent)
        for name in agent.secret_env:
            if self.environ.get(name):
                return name, self.environ[name]
        raise LookupError(
            f"this worker has no key for {grant.agent}: set one of {', '.join(agent.secret_env)}"
        )

    def _mcp(self, grant: Grant) -> tuple[str, str]:
        server = grant.mcp
        assert server is not None
        url, token = self.environ.get(server.url_env), self.environ.get(server.token_env)
        if not url or not token:
            raise LookupError(
                f"this worker lacks {server.url_env} or {server.token_env} for MCP server "
                f"{server.name!r}"
            )
        return url, token

    def key_variable(self, grant: Grant) -> str | None:
        """The variable the agent reads its key from, as its real key would be given.

        ``None`` when this host has no key for it: the agent then gets no placeholder
        either, and fails to log in at once (``infra_auth``) rather than retrying a
        gateway that can only refuse it.
        """
        try:
            return self._secret(grant)[0]
        except LookupError:
            return None


async def _is_gateway(url: str) -> bool:
    try:
        async with httpx.AsyncClient(timeout=5.0) as client:
            response = await client.get(f"{url}/healthz")
        return bool(response.json().get("gateway") == "durabench")
    except (httpx.HTTPError, ValueError, AttributeError):
        return False
