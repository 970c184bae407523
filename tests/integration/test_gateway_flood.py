"""A hostile sandbox floods the real gateway; the worker does not feel it, other attempts go on.

The test process plays the worker: it owns the :class:`ModelGateway` (which supervises
the gateway's own process) and the scripted model API of an honest attempt. The flood
comes from a process of its own (:mod:`tests.gateway_flood`) on another loopback
address, as a sandbox has an address of its own on the gateway network. While it floods,
the honest attempt's request must be answered, and the worker's open files and memory
must not grow with the flood: it lands in the gateway's process, within its limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from durabench.classify.metered import HARNESS_REFUSALS
from durabench.gateway import GatewayLimits, Grant, ModelGateway, read_ledger
from durabench.gateway.ledger import read_entries
from durabench.gateway.supervisor import health_of
from durabench.models.config import McpServer
from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
REPO = Path(__file__).resolve().parents[2]
FLOOD_SOURCE = "127.0.0.2"
"""The flooding sandbox's address; the honest attempt comes from 127.0.0.1."""
IDLE_CONNECTIONS = 3000
SLOW_BODIES, BODY_MIB = 8, 24
FD_SLACK = 64
"""Open files the worker may gain while a sandbox floods (its own HTTP client, a thread)."""
RSS_SLACK_MIB = 64


def _answer(received: Received) -> Reply:
    return anthropic_stream(MODEL, [{"type": "text", "text": "hello"}], input_tokens=12)


class Upstream(ModelUpstream):
    """The attempts' model API; requests asking to ``hold`` wait for :attr:`hold` to be set."""

    def __init__(self) -> None:
        self.hold = threading.Event()
        self.hold.set()
        self.holding = 0
        """Requests waiting for :attr:`hold`, or answered after waiting."""
        self._count = threading.Lock()
        super().__init__(_answer)

    def _answer(self, received: Received) -> Reply:
        if isinstance(received.body, dict) and received.body.get("hold"):
            with self._count:  # one handler thread per request
                self.holding += 1
            self.hold.wait(timeout=60)
        return super()._answer(received)


class Rig(NamedTuple):
    gateway: ModelGateway
    upstream: Upstream
    url: str
    honest: str
    """The honest attempt's placeholder."""
    hostile: str
    """The flooding attempt's placeholder (an OpenAI agent's, whose API is not there)."""
    ledger: Path


@pytest.fixture
async def rig_with(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[Rig]]]:
    """Makes the rig: a gateway (with the limits given), its upstream, two attempts' keys."""
    upstream = Upstream().__enter__()
    gateways: list[ModelGateway] = []

    async def make(**limits: Any) -> Rig:
        environ = {
            "ANTHROPIC_API_KEY": "sk-ant-real-key-0123456789",
            "OPENAI_API_KEY": "sk-openai-real-key-0123456789",
            "ANTHROPIC_BASE_URL": upstream.url,
            "OPENAI_BASE_URL": "http://127.0.0.1:9",  # nothing listens: the flood goes nowhere
            "SG_URL": upstream.url + "/sg",
            "SG_TOKEN": "sgp_real_mcp_token_0123456789",
        }
        gateway = ModelGateway(
            tmp_path / "gateway",
            "unused",
            0,
            tmp_path / "accounts.toml",
            environ,
            bind_host="127.0.0.1",
            **({"limits": GatewayLimits(**limits)} if limits else {}),
        )
        gateways.append(gateway)
        ledger = tmp_path / "honest.jsonl"
        honest = gateway.store.grant(
            Grant(
                attempt="honest",
                agent="claude-code",
                provider="anthropic",
                model=MODEL,
                ledger=str(ledger),
            )
        )
        hostile = gateway.store.grant(
            Grant(
                attempt="hostile",
                agent="codex-cli",
                provider="openai",
                model="gpt-5",
                ledger=str(tmp_path / "hostile.jsonl"),
            )
        )
        return Rig(gateway, upstream, await gateway.url(), honest, hostile, ledger)

    yield make
    upstream.hold.set()
    for gateway in gateways:
        await gateway.aclose()
    upstream.__exit__()


@pytest.fixture
async def rig(rig_with: Callable[..., Awaitable[Rig]]) -> Rig:
    """The rig with the gateway's default limits."""
    return await rig_with()


def _open_files(pid: int | str | None = "self") -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _rss_mib(pid: int | str | None = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/status")


@contextmanager
def _peak_rss(pid: int | str | None = "self") -> Iterator[list[float]]:
    """A process's highest RSS while the block runs, sampled (big buffers are freed fast)."""
    peak, done = [_rss_mib(pid)], threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            with contextlib.suppress(OSError, AssertionError):  # it died: its peak is known
                peak[0] = max(peak[0], _rss_mib(pid))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        done.set()
        thread.join()


@contextmanager
def _flood(*args: object) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        [sys.executable, "-m", "tests.gateway_flood", *map(str, args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    ) as flood:
        try:
            yield flood
        finally:
            flood.kill()


async def _honest_request(rig: Rig) -> float:
    """The honest attempt's request: answered, and how long it took (printed, not judged)."""
    began = time.monotonic()
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.post(
            f"{rig.url}/anthropic/v1/messages",
            headers={"x-api-key": rig.honest},
            json={"model": MODEL, "max_tokens": 10, "stream": True, "messages": []},
        )
    assert response.status_code == 200, response.text
    assert '"text": "hello"' in response.text
    return time.monotonic() - began


async def test_an_idle_connection_flood_lands_in_the_gateway_and_others_are_answered(
    rig: Rig,
) -> None:
    host, port = rig.url.removeprefix("http://").rsplit(":", 1)
    await _honest_request(rig)  # the worker's own client and threads exist before counting
    files, rss = _open_files(), _rss_mib()
    with _flood("idle", host, port, FLOOD_SOURCE, IDLE_CONNECTIONS) as flood:
        assert flood.stdout is not None and flood.stdin is not None
        opened = await asyncio.to_thread(flood.stdout.readline)
        assert opened.startswith("opened"), opened
        during_files, during_rss = _open_files(), _rss_mib()
        latency = await _honest_request(rig)
        flood.stdin.close()
        still_open = await asyncio.to_thread(flood.stdout.readline)
        gateway_files = _open_files(rig.gateway.pid)  # the flood's are all closed or held
    print(
        f"flood {opened.strip()}, {still_open.strip()} after the honest request; honest request "
        f"{latency * 1000:.0f} ms; worker files {files} -> {during_files}, "
        f"RSS {rss:.0f} -> {during_rss:.0f} MiB"
    )
    assert during_files - files < FD_SLACK, "the flood's connections are in the worker"
    assert during_rss - rss < RSS_SLACK_MIB
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.requests == 2
    per_peer = GatewayLimits().connections_per_peer
    assert int(still_open.split()[1]) <= per_peer  # the gateway closed the rest at once
    assert gateway_files < per_peer + FD_SLACK
    assert (await health_of(rig.url) or {}).get("pid") == rig.gateway.pid  # never died


@pytest.mark.parametrize("memory_mb", [None, 160], ids=["default-limits", "memory-limit-hit"])
async def test_slow_huge_bodies_do_not_reach_the_worker_and_others_are_answered(
    rig_with: Callable[..., Awaitable[Rig]], memory_mb: int | None
) -> None:
    """With the gateway's memory limit below what the bodies need, it is the gateway that fails."""
    rig = await (rig_with(memory_mb=memory_mb) if memory_mb else rig_with())
    host, port = rig.url.removeprefix("http://").rsplit(":", 1)
    await _honest_request(rig)
    with _peak_rss() as peak, _peak_rss(rig.gateway.pid) as gateway_peak:
        base = peak[0]
        args = ("bodies", host, port, FLOOD_SOURCE, SLOW_BODIES, BODY_MIB, rig.hostile)
        with _flood(*args) as flood:
            assert flood.stdout is not None
            await asyncio.sleep(1)  # the honest request goes while the bodies are on their way
            latency = await _honest_request(rig)
            dropped = await asyncio.to_thread(flood.stdout.readline)
    print(
        f"{dropped.strip()}; honest request {latency * 1000:.0f} ms; worker RSS {base:.0f} -> "
        f"peak {peak[0]:.0f} MiB; gateway peak {gateway_peak[0]:.0f} MiB"
    )
    assert peak[0] - base < RSS_SLACK_MIB, "the bodies were held in the worker"
    limit = memory_mb or GatewayLimits().memory_mb
    assert gateway_peak[0] < limit + RSS_SLACK_MIB  # its limit, and its code and libraries
    await _honest_request(rig)  # the gateway, or the one restarted in its place, serves


def _read_to_end(sock: socket.socket) -> bytes:
    """All the gateway sends until it closes the connection (a bound of 30 s on waiting)."""
    sock.settimeout(30)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


async def test_stalled_senders_are_dropped_and_others_answered(
    rig_with: Callable[..., Awaitable[Rig]],
) -> None:
    rig = await rig_with(header_timeout_sec=0.5, body_timeout_sec=0.5)
    host, port = rig.url.removeprefix("http://").rsplit(":", 1)
    idle = socket.create_connection((host, int(port)))
    slow_headers = socket.create_connection((host, int(port)))
    slow_headers.sendall(b"POST /anthropic/v1/messages HTTP/1.1\r\nhost: gateway\r\n")
    slow_body = socket.create_connection((host, int(port)))
    slow_body.sendall(
        b"POST /anthropic/v1/messages HTTP/1.1\r\nhost: gateway\r\n"
        + f"x-api-key: {rig.honest}\r\ncontent-length: 1000\r\n\r\n".encode()
        + b'{"model": "'
    )
    with idle, slow_headers, slow_body:
        assert await asyncio.to_thread(_read_to_end, idle) == b""
        assert await asyncio.to_thread(_read_to_end, slow_headers) == b""
        answer = await asyncio.to_thread(_read_to_end, slow_body)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    await _honest_request(rig)
    assert rig.upstream.received[-1].body["model"] == MODEL  # only the honest request went on


async def _at_its_limit(rig: Rig) -> tuple[list[asyncio.Task[httpx.Response]], Any]:
    """The honest attempt with two requests held at the API; ``ask`` sends one more."""
    rig.upstream.hold.clear()

    async def ask(key: str, hold: bool = False) -> httpx.Response:
        async with httpx.AsyncClient(timeout=120) as client:
            return await client.post(
                f"{rig.url}/anthropic/v1/messages",
                headers={"x-api-key": key},
                json={"model": MODEL, "max_tokens": 10, "messages": [], "hold": hold},
            )

    held = [asyncio.create_task(ask(rig.honest, hold=True)) for _ in range(2)]

    async def both_arrived() -> None:
        while rig.upstream.holding < 2:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(both_arrived(), timeout=60)
    return held, ask


def _other(rig: Rig, tmp_path: Path) -> str:
    grant = Grant(
        attempt="other",
        agent="claude-code",
        provider="anthropic",
        model=MODEL,
        ledger=str(tmp_path / "other.jsonl"),
    )
    return rig.gateway.store.grant(grant)


async def test_a_request_past_its_attempts_limit_waits_while_another_is_answered(
    rig_with: Callable[..., Awaitable[Rig]], tmp_path: Path
) -> None:
    rig = await rig_with(requests_per_attempt=2)
    other = _other(rig, tmp_path)
    held, ask = await _at_its_limit(rig)
    third = asyncio.create_task(ask(rig.honest))
    assert (await ask(other)).status_code == 200  # another attempt goes on meanwhile
    assert not third.done() and len(rig.upstream.received) == 1  # only the other's went on
    rig.upstream.hold.set()
    answers = await asyncio.gather(*held, third)
    assert [r.status_code for r in answers] == [200, 200, 200]  # a burst: latency, no error


async def test_a_request_that_waited_too_long_for_its_attempts_slot_is_refused(
    rig_with: Callable[..., Awaitable[Rig]], tmp_path: Path
) -> None:
    rig = await rig_with(requests_per_attempt=2, queue_timeout_sec=0.5)
    other = _other(rig, tmp_path)
    held, ask = await _at_its_limit(rig)
    refused = await ask(rig.honest)
    assert refused.status_code == 429 and "requests in flight" in refused.text
    assert (await ask(other)).status_code == 200
    rig.upstream.hold.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]


async def test_an_mcp_request_waits_for_its_attempts_slot_whatever_other_key_it_carries(
    rig_with: Callable[..., Awaitable[Rig]], tmp_path: Path
) -> None:
    """The limit and the MCP server are reached by the same key: a junk placeholder in
    another header must not buy a fresh slot for a request served on the real one."""
    rig = await rig_with(requests_per_attempt=1, queue_timeout_sec=0.5)
    server = McpServer(
        name="sourcegraph", url_env="SG_URL", token_env="SG_TOKEN", url_suffix="/.api/mcp/v1"
    )
    grant = Grant(
        attempt="mcp",
        agent="claude-code",
        provider="anthropic",
        model=MODEL,
        ledger=str(tmp_path / "mcp.jsonl"),
        mcp=server,
    )
    token = rig.gateway.store.grant(grant)
    rig.upstream.hold.clear()

    async def call(hold: bool, **headers: str) -> httpx.Response:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "hold": hold}
        async with httpx.AsyncClient(timeout=120) as client:
            return await client.post(f"{rig.url}/mcp/.api/mcp/v1", headers=headers, json=body)

    held = asyncio.create_task(call(True, authorization=f"token {token}"))
    while rig.upstream.holding < 1:
        await asyncio.sleep(0.02)
    for n in range(3):
        junk = f"dbgw-{n:048d}"
        smuggled = await call(False, **{"x-api-key": junk, "authorization": f"token {token}"})
        assert smuggled.status_code in (401, 429), smuggled.text
    assert len(rig.upstream.received) == 0  # the held request is still at the API
    rig.upstream.hold.set()
    assert (await held).status_code == 200
    assert len(rig.upstream.received) == 1


async def test_a_request_refused_because_the_host_is_full_is_the_hosts_failure_in_its_ledger(
    rig_with: Callable[..., Awaitable[Rig]], tmp_path: Path
) -> None:
    """Other attempts' requests filled the gateway: the one turned away was not its agent's
    doing, so its ledger says so in the host's words (infra, retried), not nothing."""
    rig = await rig_with(requests=2)
    other = _other(rig, tmp_path)
    held, ask = await _at_its_limit(rig)  # the honest attempt holds the host's two slots
    for _ in range(3):  # one line for a run of refusals: a flood cannot grow the ledger
        assert (await ask(other)).status_code == 503
    entries = read_entries(tmp_path / "other.jsonl")
    assert [(e.status, e.refused) for e in entries] == [(503, "gateway overloaded")]
    metered = read_ledger(tmp_path / "other.jsonl")
    assert metered is not None and metered.last_refused == "gateway overloaded"
    assert "gateway overloaded" in HARNESS_REFUSALS
    rig.upstream.hold.set()
    assert [r.status_code for r in await asyncio.gather(*held)] == [200, 200]
