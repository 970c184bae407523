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
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest

from durabench.gateway import Grant, ModelGateway, read_ledger
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


class Rig(NamedTuple):
    gateway: ModelGateway
    upstream: ModelUpstream
    url: str
    honest: str
    """The honest attempt's placeholder."""
    hostile: str
    """The flooding attempt's placeholder (an OpenAI agent's, whose API is not there)."""
    ledger: Path


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    with ModelUpstream(_answer) as upstream:
        environ = {
            "ANTHROPIC_API_KEY": "sk-ant-real-key-0123456789",
            "OPENAI_API_KEY": "sk-openai-real-key-0123456789",
            "ANTHROPIC_BASE_URL": upstream.url,
            "OPENAI_BASE_URL": "http://127.0.0.1:9",  # nothing listens: the flood goes nowhere
        }
        gateway = ModelGateway(
            tmp_path / "gateway",
            "unused",
            0,
            tmp_path / "accounts.toml",
            environ,
            bind_host="127.0.0.1",
        )
        ledger = tmp_path / "honest.jsonl"
        honest = gateway.store.grant(
            Grant(attempt="honest", agent="claude-code", provider="anthropic", ledger=str(ledger))
        )
        hostile = gateway.store.grant(
            Grant(
                attempt="hostile",
                agent="codex-cli",
                provider="openai",
                ledger=str(tmp_path / "hostile.jsonl"),
            )
        )
        try:
            yield Rig(gateway, upstream, await gateway.url(), honest, hostile, ledger)
        finally:
            await gateway.aclose()


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def _rss_mib(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/status")


@contextmanager
def _peak_rss() -> Iterator[list[float]]:
    """The worker's highest RSS while the block runs, sampled (big buffers are freed fast)."""
    peak, done = [_rss_mib()], threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _rss_mib())

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
    print(
        f"flood {opened.strip()}, {still_open.strip()} after the honest request; honest request "
        f"{latency * 1000:.0f} ms; worker files {files} -> {during_files}, "
        f"RSS {rss:.0f} -> {during_rss:.0f} MiB"
    )
    assert during_files - files < FD_SLACK, "the flood's connections are in the worker"
    assert during_rss - rss < RSS_SLACK_MIB
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.requests == 2


async def test_slow_huge_bodies_do_not_reach_the_worker_and_others_are_answered(
    rig: Rig,
) -> None:
    host, port = rig.url.removeprefix("http://").rsplit(":", 1)
    await _honest_request(rig)
    with _peak_rss() as peak:
        base = peak[0]
        args = ("bodies", host, port, FLOOD_SOURCE, SLOW_BODIES, BODY_MIB, rig.hostile)
        with _flood(*args) as flood:
            assert flood.stdout is not None
            await asyncio.sleep(1)  # the honest request goes while the bodies are on their way
            latency = await _honest_request(rig)
            dropped = await asyncio.to_thread(flood.stdout.readline)
    print(
        f"{dropped.strip()}; honest request {latency * 1000:.0f} ms; worker RSS {base:.0f} -> "
        f"peak {peak[0]:.0f} MiB"
    )
    assert peak[0] - base < RSS_SLACK_MIB, "the bodies were held in the worker"
