"""The model gateway over real HTTP: a scripted upstream on loopback, the gateway on loopback.

What an agent sends carries only its placeholder; what reaches the API carries the real
key; what comes back is passed on byte for byte and metered from the API's own figures.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from durabench.gateway import Grant, ModelGateway, read_ledger
from durabench.models.config import McpServer
from tests.model_upstream import (
    ModelUpstream,
    Received,
    Reply,
    anthropic_stream,
    gemini_stream,
    openai_stream,
)

REAL = "sk-ant-real-key-0123456789"
OAUTH = "sk-ant-oat01-real-oauth-token"
OPENAI = "sk-openai-real-key-0123456789"
GEMINI = "AIza-real-gemini-key-0123456789"
MCP_TOKEN = "sgp_real_mcp_token_0123456789"
MODEL = "claude-haiku-4-5"


def _text(received: Received) -> Reply:
    return anthropic_stream(MODEL, [{"type": "text", "text": "hello"}], input_tokens=120)


class Rig:
    """An upstream, a gateway in front of it, and a grant to use it with."""

    def __init__(self, tmp_path: Path, upstream: ModelUpstream, environ: dict[str, str]) -> None:
        self.tmp_path, self.upstream = tmp_path, upstream
        self.gateway = ModelGateway(
            tmp_path / "gateway",
            "unused",
            0,
            tmp_path / "accounts.toml",
            environ,
            bind_host="127.0.0.1",
        )
        self.ledger = tmp_path / "gateway.jsonl"

    def grant(self, agent: str = "claude-code", provider: str = "anthropic", **kw: object) -> str:
        models = {"anthropic": MODEL, "openai": "gpt-5-codex", "gemini": "gemini-2.5-pro"}
        grant = Grant.model_validate(
            {
                "attempt": "run-1-task-1-mcp-1",
                "agent": agent,
                "provider": provider,
                "model": models[provider],
                "ledger": str(self.ledger),
                **kw,
            }
        )
        return self.gateway.store.grant(grant)

    async def url(self) -> str:
        return await self.gateway.url()


@pytest.fixture
async def rig_of(tmp_path: Path) -> AsyncIterator[Callable[..., Rig]]:
    rigs: list[tuple[Rig, ModelUpstream]] = []

    def make(script: Callable[[Received], Reply] = _text, **environ: str) -> Rig:
        upstream = ModelUpstream(script).__enter__()
        env = {
            "ANTHROPIC_API_KEY": REAL,
            "OPENAI_API_KEY": OPENAI,
            "GEMINI_API_KEY": GEMINI,
            "ANTHROPIC_BASE_URL": upstream.url,
            "OPENAI_BASE_URL": upstream.url,
            "GOOGLE_GEMINI_BASE_URL": upstream.url,
            **environ,
        }
        rig = Rig(tmp_path, upstream, env)
        rigs.append((rig, upstream))
        return rig

    yield make
    for rig, upstream in rigs:
        await rig.gateway.aclose()
        upstream.__exit__()


async def _messages(url: str, key: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(
            f"{url}/anthropic/v1/messages",
            headers={"x-api-key": key, **headers},
            json={"model": MODEL, "max_tokens": 10, "stream": True, "messages": []},
        )


async def test_the_api_gets_the_real_key_and_the_agent_only_ever_held_a_placeholder(
    rig_of: Callable[..., Rig],
) -> None:
    rig = rig_of()
    token = rig.grant()
    assert REAL not in token
    response = await _messages(await rig.url(), token)
    assert response.status_code == 200
    assert '"text": "hello"' in response.text  # the stream came through as sent
    (seen,) = rig.upstream.received
    assert seen.headers["x-api-key"] == REAL
    assert token not in json.dumps(seen.headers)
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.requests == 1
    assert metered.tokens.input == 120 and metered.tokens.output == 20
    assert metered.served_models == (MODEL,) and metered.asked_models == (MODEL,)
    assert REAL not in rig.ledger.read_text() and token not in rig.ledger.read_text()


async def test_an_unknown_or_revoked_key_reaches_nothing(rig_of: Callable[..., Rig]) -> None:
    rig = rig_of()
    token = rig.grant()
    url = await rig.url()
    assert (await _messages(url, "dbgw-" + "0" * 48)).status_code == 401
    assert (await _messages(url, REAL)).status_code == 401  # a real key is no pass either
    rig.gateway.store.revoke("run-1-task-1-mcp-1")
    refused = await _messages(url, token)
    assert refused.status_code == 401 and "no running attempt" in refused.text
    assert rig.upstream.received == []


async def test_an_oauth_token_goes_out_as_a_bearer_with_the_oauth_beta(
    rig_of: Callable[..., Rig],
) -> None:
    rig = rig_of(ANTHROPIC_API_KEY="", CLAUDE_CODE_OAUTH_TOKEN=OAUTH)
    token = rig.grant()
    async with httpx.AsyncClient() as client:  # as Claude Code sends an OAuth token
        response = await client.post(
            f"{await rig.url()}/anthropic/v1/messages",
            headers={"authorization": f"Bearer {token}", "anthropic-beta": "fine-grained"},
            json={"model": MODEL, "messages": []},
        )
    assert response.status_code == 200
    (seen,) = rig.upstream.received
    assert seen.headers["authorization"] == f"Bearer {OAUTH}"
    assert seen.headers["anthropic-beta"] == "fine-grained,oauth-2025-04-20"
    assert "x-api-key" not in seen.headers


async def test_openai_and_gemini_streams_are_metered_from_their_own_usage(
    rig_of: Callable[..., Rig],
) -> None:
    def script(received: Received) -> Reply:
        if received.path.startswith("/v1/responses"):
            return openai_stream(
                "gpt-5-codex", "ok", input_tokens=500, cached=300, output_tokens=40
            )
        return gemini_stream("gemini-2.5-pro", "ok", prompt=70, output_tokens=9)

    rig = rig_of(script)
    url = await rig.url()
    codex = rig.grant("codex-cli", "openai")
    async with httpx.AsyncClient() as client:
        r = await client.post(
            f"{url}/openai/v1/responses",
            headers={"authorization": f"Bearer {codex}"},
            json={"model": "gpt-5-codex", "stream": True},
        )
        assert r.status_code == 200
        metered = read_ledger(rig.ledger)
        assert metered is not None
        assert (metered.tokens.input, metered.tokens.cache_read, metered.tokens.output) == (
            200,
            300,
            40,
        )
        rig.ledger.unlink()
        gemini = rig.grant("gemini-cli", "gemini")
        path = "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent"
        r = await client.post(f"{url}{path}?alt=sse&key={gemini}", json={"contents": []})
        assert r.status_code == 200
    codex_seen, gemini_seen = rig.upstream.received
    assert codex_seen.headers["authorization"] == f"Bearer {OPENAI}"
    assert gemini_seen.headers["x-goog-api-key"] == GEMINI
    assert gemini_seen.path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    metered = read_ledger(rig.ledger)
    assert metered is not None
    assert (metered.tokens.input, metered.tokens.output) == (70, 9)
    assert metered.asked_models == ("gemini-2.5-pro",)


async def test_rate_limits_are_recorded_as_the_api_sent_them(rig_of: Callable[..., Rig]) -> None:
    def limited(received: Received) -> Reply:
        body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
        return Reply(status=429, body=body, headers={"retry-after": "30"})

    rig = rig_of(limited)
    token = rig.grant()
    for _ in range(3):
        assert (await _messages(await rig.url(), token)).status_code == 429
    metered = read_ledger(rig.ledger)
    assert metered is not None
    assert (metered.rate_limited, metered.last_status, metered.last_retry_after) == (3, 429, "30")


async def test_a_spent_budget_refuses_the_next_request_without_reaching_the_api(
    rig_of: Callable[..., Rig],
) -> None:
    rig = rig_of()
    token = rig.grant(budget_tokens=200)
    url = await rig.url()
    assert (await _messages(url, token)).status_code == 200  # 140 tokens: within
    assert (await _messages(url, token)).status_code == 200  # 280: spent by this one
    refused = await _messages(url, token)
    assert refused.status_code == 400 and "budget of 200 tokens is spent" in refused.text
    assert len(rig.upstream.received) == 2
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.budget_spent


async def test_a_stream_cut_mid_message_is_recorded_with_what_came(
    rig_of: Callable[..., Rig],
) -> None:
    def cut(received: Received) -> Reply:
        reply = _text(received)
        reply.cut_after = 3  # message_start and part of the text, no message_delta
        return reply

    rig = rig_of(cut)
    response = await _messages(await rig.url(), rig.grant())
    assert response.status_code == 200 and "message_stop" not in response.text
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.tokens.input == 120 and metered.tokens.output == 1
    assert metered.last_refused == "upstream cut"  # the host's failure, on the gateway's word


async def test_the_mcp_server_gets_its_token_and_the_agent_only_the_placeholder(
    rig_of: Callable[..., Rig],
) -> None:
    def mcp(received: Received) -> Reply:
        return Reply(body={"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})

    rig = rig_of(mcp)
    rig.gateway.environ = {**rig.gateway.environ, "SG_URL": rig.upstream.url + "/sg"}
    rig.gateway.environ = {**rig.gateway.environ, "SG_TOKEN": MCP_TOKEN}
    server = McpServer(
        name="sourcegraph", url_env="SG_URL", token_env="SG_TOKEN", url_suffix="/.api/mcp/v1"
    )
    token = rig.grant(mcp=server.model_dump())
    async with httpx.AsyncClient() as client:
        elsewhere = await client.post(  # the token is good for the MCP endpoint only
            f"{await rig.url()}/mcp/.api/graphql", headers={"authorization": f"token {token}"}
        )
        assert elsewhere.status_code == 403
        r = await client.post(
            f"{await rig.url()}/mcp/.api/mcp/v1",
            headers={"authorization": f"token {token}"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert r.status_code == 200 and r.json()["result"] == {"tools": []}
    (seen,) = rig.upstream.received
    assert seen.path == "/sg/.api/mcp/v1"
    assert seen.headers["authorization"] == f"token {MCP_TOKEN}"
    metered = read_ledger(rig.ledger)
    assert metered is not None and (metered.mcp_requests, metered.mcp_answered) == (2, 1)
    assert metered.requests == 0  # MCP traffic is no model request


async def test_a_worker_without_the_key_says_which_variable_to_set(
    rig_of: Callable[..., Rig],
) -> None:
    rig = rig_of(ANTHROPIC_API_KEY="")
    response = await _messages(await rig.url(), rig.grant())
    assert response.status_code == 503
    assert "ANTHROPIC_API_KEY" in response.text and rig.upstream.received == []


def test_an_openai_upstream_named_with_its_version_is_not_doubled() -> None:
    from durabench.gateway import PROVIDERS

    openai = PROVIDERS["openai"]
    assert openai.upstream({"OPENAI_BASE_URL": "https://proxy.example/v1/"}) == (
        "https://proxy.example"
    )
    assert openai.upstream({}) == "https://api.openai.com"
    assert PROVIDERS["anthropic"].upstream({"ANTHROPIC_BASE_URL": "http://a/v1"}) == "http://a/v1"


async def test_only_model_endpoints_are_passed_on(rig_of: Callable[..., Rig]) -> None:
    """Batches, files or admin APIs would spend the key where the meter cannot see."""
    rig = rig_of()
    token, url = rig.grant(), await rig.url()
    async with httpx.AsyncClient() as client:
        for path in ("/v1/messages/batches", "/v1/files", "/v1/organizations/me", "/v1/../x"):
            r = await client.post(f"{url}/anthropic{path}", headers={"x-api-key": token})
            assert r.status_code in (403, 404), path  # 404: the path never left the client
    assert rig.upstream.received == []
    assert (await _messages(url, token)).status_code == 200


async def test_a_second_worker_of_the_host_uses_the_first_gateway_and_restarts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Grants are files: one gateway process serves both workers' agents, either restarts it."""
    import os
    import signal
    import socket

    from durabench.gateway import GatewayLimits, supervisor

    monkeypatch.setattr(supervisor, "CHECK_S", 0.1)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environ = {"ANTHROPIC_API_KEY": REAL}

    def gateway() -> ModelGateway:
        root, accounts = tmp_path / "gateway", tmp_path / "accounts.toml"
        limits = GatewayLimits(linger_sec=0)
        return ModelGateway(
            root, "unused", port, accounts, environ, bind_host="127.0.0.1", limits=limits
        )

    async def health() -> dict[str, object]:
        async with httpx.AsyncClient() as client:
            doc: dict[str, object] = (await client.get(f"{url}/healthz")).json()
        return doc

    first, second = gateway(), gateway()
    url = await first.url()
    started = first.pid
    assert started is not None and started != os.getpid()  # a process of its own
    assert await second.url() == url and second.pid is None  # the first one's serves
    await first.aclose()
    assert (await health())["pid"] == started  # the second worker still holds it
    os.kill(started, signal.SIGKILL)

    async def restarted() -> None:  # the second worker's supervisor starts another
        while second.pid is None:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(restarted(), timeout=60)
    assert (await health())["gateway"] == "durabench" and second.pid != started
    assert await second.url() == url
    await second.aclose()
