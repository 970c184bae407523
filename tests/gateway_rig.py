"""The gateway's app on loopback in front of a scripted upstream: policy tests' rig.

The app (:class:`GatewayApp`) is served by uvicorn on a free loopback port in the test's
own loop, with keys resolved from a dict: what it passes on, refuses and meters is the
app's policy, whichever process serves it in production. :func:`hardened_rig` serves it
as the gateway's process does (its limits, its strict HTTP/1.1), for attacks on the
proxy itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from durabench.gateway import Grant, GrantStore
from durabench.gateway.app import GatewayApp
from durabench.gateway.limits import GatewayLimits
from durabench.gateway.process import server_config
from durabench.gateway.upstream import UpstreamClients
from tests.model_upstream import ModelUpstream, Received, Reply

__all__ = ["KEYS", "GatewayRig", "gateway_rig", "hardened_rig"]

KEYS = {
    "anthropic": ("ANTHROPIC_API_KEY", "sk-ant-real-key-0123456789"),
    "openai": ("OPENAI_API_KEY", "sk-openai-real-key-0123456789"),
    "gemini": ("GEMINI_API_KEY", "AIza-real-gemini-key-0123456789"),
}
"""The real keys the rig's gateway sends upstream, by provider."""
MCP_TOKEN = "sgp_real_mcp_token_0123456789"


@dataclass
class GatewayRig:
    """A served gateway app, its upstream, its grant store and one attempt's ledger."""

    url: str
    upstream: ModelUpstream
    store: GrantStore
    ledger: Path
    app: GatewayApp

    def grant(self, provider: str = "anthropic", **fields: object) -> str:
        """A placeholder for one attempt of ``provider``'s agent (``fields`` override)."""
        agent = {"anthropic": "claude-code", "openai": "codex-cli", "gemini": "gemini-cli"}
        doc = {
            "attempt": "run-1-task-1-baseline-1",
            "agent": agent[provider],
            "provider": provider,
            "ledger": str(self.ledger),
            **fields,
        }
        return self.store.grant(Grant.model_validate(doc))

    async def send(
        self, method: str, path: str, token: str, *, json: object = None, content: bytes = b""
    ) -> httpx.Response:
        """One request as an agent sends it (``path`` sent as written, undecoded)."""
        headers = {"x-api-key": token, "authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(timeout=30) as client:
            request = client.build_request(
                method, self.url, headers=headers, json=json, content=content or None
            )
            request.url = request.url.copy_with(raw_path=path.encode())
            return await client.send(request)


@asynccontextmanager
async def gateway_rig(
    tmp_path: Path,
    script: Callable[[Received], Reply],
    limits: GatewayLimits | None = None,
) -> AsyncIterator[GatewayRig]:
    """Serve the gateway app on loopback in front of ``script``'s upstream.

    ``limits``: serve it as the gateway's process does, with those limits (see
    :func:`hardened_rig`); else by plain uvicorn.
    """

    def secret(grant: Grant) -> tuple[str, str]:
        return KEYS[grant.provider]

    def mcp(grant: Grant) -> tuple[str, str]:
        return upstream.url + "/sg", MCP_TOKEN

    with ModelUpstream(script) as upstream:
        store = GrantStore(tmp_path / "gateway")
        clients = UpstreamClients(lambda: httpx.AsyncClient(timeout=30, follow_redirects=False))
        upstreams = {name: upstream.url for name in KEYS}
        app = GatewayApp(store, secret, mcp, upstreams, clients)  # type: ignore[arg-type]
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        if limits is None:
            config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
        else:
            config = server_config(app, limits, {"gateway": "durabench", "pid": 1})
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        try:
            yield GatewayRig(url, upstream, store, tmp_path / "gateway.jsonl", app)
        finally:
            server.should_exit = True
            await task
            await clients.aclose()
            sock.close()


def hardened_rig(
    tmp_path: Path, script: Callable[[Received], Reply], limits: GatewayLimits | None = None
) -> contextlib.AbstractAsyncContextManager[GatewayRig]:
    """The gateway as its process serves it: :func:`~durabench.gateway.process.server_config`."""
    return gateway_rig(tmp_path, script, limits or GatewayLimits())
