"""What the model gateway adds to each model request, and how many it passes per second.

``python bench/gateway.py [--k 200] [--concurrency 16] [--requests 2000]``

A scripted model API on loopback (:mod:`tests.model_upstream`, a streamed Anthropic
answer) is asked directly and through the real gateway process (started by
:class:`ModelGateway` as a worker starts it, default limits), with one kept-alive client
per arm, in alternating order:

- latency: ``--k`` requests one after another per arm; medians and the 95th percentile;
  what the gateway adds is the difference of the medians.
- throughput: ``--requests`` requests from ``--concurrency`` clients at once, each client
  on a placeholder of its own (as many attempts would), through the gateway and directly.

The upstream is a threaded ``http.server`` in this process, so both arms share its cost;
the load average is printed beside each figure, as the machine may be shared. The latency
pair and each throughput arm are rounds of the load guard (``_load.py``): repeated while
the machine is busy, and no ratio unless all were calm.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
import tempfile
import time
from pathlib import Path

import _path  # noqa: F401  (first: the checkout's own packages)
import httpx
from _common import LoadGuard, add_tries, machine

from durabench.gateway import GatewayLimits, Grant, ModelGateway
from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
BODY = {"model": MODEL, "max_tokens": 10, "stream": True, "messages": []}


def _answer(received: Received) -> Reply:
    return anthropic_stream(MODEL, [{"type": "text", "text": "hello"}], input_tokens=12)


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


async def _ask(client: httpx.AsyncClient, url: str, key: str) -> float:
    began = time.perf_counter()
    response = await client.post(f"{url}/v1/messages", headers={"x-api-key": key}, json=BODY)
    if response.status_code != 200:
        raise SystemExit(f"the bench's request failed: {response.status_code} {response.text}")
    return time.perf_counter() - began


async def latency(arms: dict[str, tuple[str, str]], k: int) -> dict[str, list[float]]:
    """``k`` sequential requests per arm, the arms alternating; seconds each."""
    times: dict[str, list[float]] = {name: [] for name in arms}
    async with httpx.AsyncClient(timeout=60) as client:
        for url, key in arms.values():  # warm-up: connections, the gateway's imports
            await _ask(client, url, key)
        for _ in range(k):
            for name, (url, key) in arms.items():
                times[name].append(await _ask(client, url, key))
    return times


async def throughput(url: str, keys: list[str], total: int) -> float:
    """Requests per second from ``len(keys)`` clients at once, ``total`` in all."""
    left = [total]

    async def client_loop(key: str) -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            while left[0] > 0:
                left[0] -= 1
                await _ask(client, url, key)

    began = time.perf_counter()
    await asyncio.gather(*(client_loop(key) for key in keys))
    return total / (time.perf_counter() - began)


def _grants(gateway: ModelGateway, root: Path, n: int) -> list[str]:
    return [
        gateway.store.grant(
            Grant(
                attempt=f"bench-{i}",
                agent="claude-code",
                provider="anthropic",
                model=MODEL,
                ledger=str(root / f"ledger-{i}.jsonl"),
            )
        )
        for i in range(n)
    ]


async def main() -> None:
    """Measure and print; the ratio is the gateway's median latency over the direct one."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--k", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--requests", type=int, default=2000)
    add_tries(parser)
    args = parser.parse_args()
    print(machine())
    root = Path(tempfile.mkdtemp(prefix="durabench-bench-gateway-"))
    guard = LoadGuard(tries=args.tries)
    with ModelUpstream(_answer) as upstream:
        environ = {
            "ANTHROPIC_API_KEY": "sk-ant-bench-key-0123456789",
            "ANTHROPIC_BASE_URL": upstream.url,
        }
        gateway = ModelGateway(
            root / "gateway",
            "unused",
            0,
            root / "accounts.toml",
            environ,
            bind_host="127.0.0.1",
            limits=GatewayLimits(linger_sec=0),
        )
        try:
            keys = _grants(gateway, root, args.concurrency)
            through = f"{await gateway.url()}/anthropic"
            arms = {"direct": (upstream.url, "direct"), "gateway": (through, keys[0])}
            times = await guard.round("latency", lambda: latency(arms, args.k))
            for name, seconds in times.items():
                p95 = statistics.quantiles(seconds, n=20)[-1]
                print(
                    f"latency {name:8} median {statistics.median(seconds) * 1000:7.2f} ms, "
                    f"p95 {p95 * 1000:7.2f} ms ({_load()})"
                )
            added = statistics.median(times["gateway"]) - statistics.median(times["direct"])
            print(f"added by the gateway: {added * 1000:.2f} ms per request ({_load()})")
            for name, url, arm_keys in (
                ("direct", upstream.url, ["direct"] * args.concurrency),
                ("gateway", through, keys),
            ):
                rate = await guard.round(
                    f"throughput {name}",
                    functools.partial(throughput, url, arm_keys, args.requests),
                )
                print(
                    f"throughput {name:8} {rate:7.0f} requests/s, {args.concurrency} clients "
                    f"({_load()})"
                )
        finally:
            await gateway.aclose()
    ratio = statistics.median(times["gateway"]) / statistics.median(times["direct"])
    print(guard.ratio_line("gateway latency over direct", ratio, None))


if __name__ == "__main__":
    asyncio.run(main())
