"""How close to an API's rate limits a run goes, and how many 429s it meets on the way.

``python bench/rate_limits.py [--sessions 40] [--turns 10] [--rpm 60] [--itpm 100000]``

A scripted Anthropic API on loopback keeps a token bucket per key (its account), for
requests and for input tokens a minute, refilled evenly as Anthropic's are, and answers
with Anthropic's ``anthropic-ratelimit-*`` headers (a 429 with ``retry-after`` when the
bucket is empty). Two accounts of ``--slots`` slots each; ``--sessions`` agent sessions
of ``--turns`` model turns, each turn ``--think`` seconds of tool time after its answer,
sent through the real gateway process (its account keys swapped in, its rate shares,
its rooms book). Each session's CLI retries a 429 ``--cli-retries`` times (waiting its
``retry-after``); a session that still meets one ends on a rate limit, and its attempt is
run again (a second paid session), as an arm's ``infra_rate_limit`` is. Sessions start
through the real account pool's rules (:class:`durabench.accounts.Pool`), asked every
``--poll`` seconds while refused, three ways, one after another, side by side:

- **live**: the pool starts a session only while the API says there is room (the rooms
  the gateway read, carried with each lease as the account activities carry them);
- **table**: today's plan without it: the parallelism the plan derives from the accounts'
  slots and the static table's limits, every slot leased as it frees;
- **too high**: ``--parallel`` set to every session at once (slots raised to match).

For each: the API's answered requests a minute over the buckets' rate (the binding one of
requests and tokens, both accounts), the same over what the buckets allowed in that time
(their rate plus the minute they hold when full), the share of answers that were 429 (the
API's or the gateway's), and the attempts run again for a rate limit. Targets (live):
>= 90 % of the rate, <= 1 % 429s, no attempt run again. Each arm is a load-guard round,
cut at ``--arm-limit`` seconds (its figures are then of that time, with the sessions done):
an arm whose sessions keep ending on rate limits may never finish.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import _path  # noqa: F401  (first: the checkout's own packages)
import httpx
from _common import LoadGuard, add_tries, machine

from durabench.accounts import Pool
from durabench.gateway import GatewayLimits, Grant, ModelGateway
from durabench.gateway.room_book import read_rooms
from durabench.models.accounts import LeaseRequest, PoolAccount, PoolState, ReleaseRequest
from durabench.models.parallelism import ModelRateLimit
from durabench.numerals import read_int
from durabench.planning.parallelism import rate_limit_bound
from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
ACCOUNTS = ("acct-1", "acct-2")
A = "anthropic-ratelimit-"


def _now() -> datetime:
    return datetime.fromtimestamp(time.time(), tz=UTC)


def _stamp(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


@dataclass
class Bucket:
    """A token bucket of ``limit`` a minute, full at first, refilled evenly."""

    limit: float
    level: float = -1.0
    at: float = 0.0

    def refill(self, now: float) -> None:
        """Add what the time since the last look refilled (full at the first)."""
        if self.level < 0:
            self.level, self.at = self.limit, now
        self.level = min(self.limit, self.level + (now - self.at) * self.limit / 60)
        self.at = now

    def headers(self, kind: str, now: float) -> dict[str, str]:
        """Anthropic's ``anthropic-ratelimit-<kind>-*`` headers for the bucket now."""
        wait = (self.limit - self.level) * 60 / self.limit
        reset = datetime.fromtimestamp(now + wait, tz=UTC)
        return {
            f"{A}{kind}-limit": str(int(self.limit)),
            f"{A}{kind}-remaining": str(max(0, int(self.level))),
            f"{A}{kind}-reset": _stamp(reset),
        }


@dataclass
class TokenBucketApi:
    """Anthropic's Messages API as far as rate limits go: a bucket pair per key."""

    rpm: int
    itpm: int
    tokens: int
    latency: float
    buckets: dict[str, tuple[Bucket, Bucket]] = field(default_factory=dict)
    answered: int = 0
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, received: Received) -> Reply:
        """Answer after ``latency``: a streamed message, or a 429 if the bucket is short."""
        time.sleep(self.latency)
        key = received.headers.get("x-api-key", "")
        with self.lock:
            now = time.time()
            requests, tokens = self.buckets.setdefault(key, (Bucket(self.rpm), Bucket(self.itpm)))
            requests.refill(now)
            tokens.refill(now)
            room = requests.level >= 1 and tokens.level >= self.tokens
            if room:
                requests.level -= 1
                tokens.level -= self.tokens
                self.answered += 1
            else:
                self.refused += 1
            headers = {**requests.headers("requests", now), **tokens.headers("input-tokens", now)}
            need = max(1 - requests.level, (self.tokens - tokens.level) * self.rpm / self.itpm)
        if room:
            reply = anthropic_stream(MODEL, [{"type": "text", "text": "ok"}], input_tokens=10)
            reply.headers.update(headers)
            return reply
        wait = max(1, int(need * 60 / self.rpm + 0.999))
        error = {"type": "error", "error": {"type": "rate_limit_error", "message": "rate limit"}}
        return Reply(status=429, body=error, headers={**headers, "retry-after": str(wait)})


class Arm(NamedTuple):
    """One way of running the sessions."""

    name: str
    parallel: int
    """Sessions asked to run at once."""
    slots: int
    """Slots of each account."""
    live: bool
    """Whether the pool follows the API's rooms."""


@dataclass
class Tally:
    """What the sessions of one arm met."""

    sent: int = 0
    throttled: int = 0
    """Answers that were 429 (the API's or the gateway's)."""
    again: int = 0
    """Attempts run again for a rate limit."""
    done: int = 0
    """Sessions that ended with every turn answered."""
    began: float = 0.0
    ended: float = 0.0


async def _session(
    args: argparse.Namespace, gateway: ModelGateway, account: str, attempt: str, tally: Tally
) -> bool:
    """One agent session; whether it ended on a rate limit (its CLI gave up)."""
    root = gateway.store.root
    grant = Grant(
        attempt=attempt,
        agent="claude-code",
        provider="anthropic",
        model=MODEL,
        account=account,
        ledger=str(root.parent / f"{attempt}.jsonl"),
    )
    token = gateway.store.grant(grant)
    body = {"model": MODEL, "max_tokens": 10, "stream": True, "messages": []}
    url = f"{await gateway.url()}/anthropic/v1/messages"
    try:
        async with httpx.AsyncClient(timeout=60) as client:
            for _ in range(args.turns):
                for tries in range(args.cli_retries + 1):
                    tally.sent += 1
                    answer = await client.post(url, headers={"x-api-key": token}, json=body)
                    if answer.status_code != 429:
                        break
                    tally.throttled += 1
                    if tries == args.cli_retries:
                        return True
                    after = answer.headers.get("retry-after", "")
                    seconds = read_int(after)
                    wait = float(seconds) if seconds is not None else 2.0**tries
                    await asyncio.sleep(min(wait, 60.0))
                await asyncio.sleep(args.think)
    finally:
        gateway.store.revoke(attempt)
    return False


async def run_arm(args: argparse.Namespace, arm: Arm, api: TokenBucketApi, root: Path) -> Tally:
    """Every session of ``arm`` through a fresh gateway and pool; what it met."""
    environ = {"ANTHROPIC_BASE_URL": args.upstream}
    toml = ""
    for n, account in enumerate(ACCOUNTS, 1):
        environ[f"BENCH_KEY_{n}"] = f"sk-ant-bench-{arm.name}-{account}-0123456789"
        toml += (
            f'[[account]]\nid = "{account}"\nagent = "claude-code"\n'
            f'secret_env = "BENCH_KEY_{n}"\nslots = {arm.slots}\n\n'
        )
    (root / "accounts.toml").write_text(toml)
    gateway = ModelGateway(
        root / "gateway",
        "unused",
        0,
        root / "accounts.toml",
        environ,
        bind_host="127.0.0.1",
        limits=GatewayLimits(linger_sec=0),
    )
    accounts = tuple(PoolAccount(id=a, agent="claude-code", slots=arm.slots) for a in ACCOUNTS)
    pool = Pool(PoolState(accounts=accounts))
    queue: list[tuple[int, int]] = [(task, 1) for task in range(args.sessions)]
    tally = Tally(began=time.monotonic())

    async def worker() -> None:
        while queue:
            task, attempt = queue.pop(0)
            req = LeaseRequest(
                agent="claude-code",
                model=MODEL if arm.live else "",
                paced=arm.live,
                holder_workflow_id=f"t{task}",
                holder_run_id="r",
                label=f"task {task} attempt {attempt}",
                lease_id=f"t{task}-{attempt}",
            )
            while True:
                rooms = read_rooms(gateway.store.root, _now()) if arm.live else ()
                grant = pool.grant(req.model_copy(update={"rooms": rooms}), req.lease_id, _now())
                if grant.lease is not None:
                    break
                await asyncio.sleep(args.poll * random.uniform(0.5, 1.5))  # noqa: S311
            name = f"{arm.name}-t{task}-{attempt}"
            limited = await _session(args, gateway, grant.lease.account_id, name, tally)
            cool = _now() + timedelta(seconds=args.cool) if limited else None
            rooms = read_rooms(gateway.store.root, _now()) if arm.live else ()
            pool.release(
                ReleaseRequest(lease_id=req.lease_id, cool_until=cool, rooms=rooms), _now()
            )
            if limited:
                tally.again += 1
                queue.append((task, attempt + 1))
            else:
                tally.done += 1

    try:
        await gateway.url()
        workers = [asyncio.create_task(worker()) for _ in range(arm.parallel)]
        _, running = await asyncio.wait(workers, timeout=args.arm_limit)
        for task in running:  # the arm's time is up: its figures are of that time
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
    finally:
        await gateway.aclose()
    tally.ended = time.monotonic()
    return tally


def _report(arm: Arm, tally: Tally, api: TokenBucketApi, args: argparse.Namespace) -> float:
    """Print the arm's figures; its throughput over the buckets' rate."""
    minutes = (tally.ended - tally.began) / 60
    rate = min(args.rpm, args.itpm / args.tokens) * len(ACCOUNTS)  # requests a minute
    allowed = rate * minutes + rate  # a full bucket holds a minute's worth
    throughput = api.answered / minutes / rate
    share = tally.throttled / max(1, tally.sent)
    print(
        f"{arm.name:8} parallel {arm.parallel:2}, {arm.slots} slots/account: "
        f"{minutes * 60:6.1f} s, {api.answered} answered = {throughput:5.1%} of the buckets' "
        f"rate ({api.answered / allowed:5.1%} of what they allowed), 429s {tally.throttled} of "
        f"{tally.sent} = {share:5.1%} (API {api.refused}), attempts run again {tally.again}, "
        f"sessions done {tally.done} of {args.sessions}"
        + ("" if tally.done == args.sessions else f" (cut at {args.arm_limit:g} s)"),
        flush=True,
    )
    return throughput


async def main() -> None:
    """Run the arms and print them side by side; the targets' lines for the live arm."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--rpm", type=int, default=60, help="requests a minute per account")
    parser.add_argument("--itpm", type=int, default=100_000, help="input tokens a minute")
    parser.add_argument("--tokens", type=int, default=2_000, help="input tokens a request")
    parser.add_argument("--think", type=float, default=2.5, help="seconds between turns")
    parser.add_argument("--latency", type=float, default=0.2, help="the API's seconds")
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--cli-retries", type=int, default=4)
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between lease asks")
    parser.add_argument("--cool", type=float, default=30.0, help="a rate limit's cooldown")
    parser.add_argument("--arms", default="live,table,high")
    parser.add_argument(
        "--arm-limit",
        type=float,
        default=600.0,
        help="seconds an arm may take; one that does not finish is cut there (default 600)",
    )
    add_tries(parser)
    args = parser.parse_args()
    print(machine())
    session = ModelRateLimit(rpm=10, tpm=100_000)  # the plan's assumption (its defaults)
    table = rate_limit_bound(MODEL, 1, {}, session).pairs or args.sessions
    table_parallel = min(table, args.slots * len(ACCOUNTS))
    arms = {
        "live": Arm("live", args.sessions, args.slots, True),
        "table": Arm("table", table_parallel, args.slots, False),
        "high": Arm("high", args.sessions, -(-args.sessions // len(ACCOUNTS)), False),
    }
    guard = LoadGuard(tries=args.tries)
    results: dict[str, tuple[float, Tally]] = {}
    for name in args.arms.split(","):
        arm = arms[name]
        api = TokenBucketApi(args.rpm, args.itpm, args.tokens, args.latency)
        with ModelUpstream(api) as upstream:
            args.upstream = upstream.url
            root = Path(tempfile.mkdtemp(prefix=f"durabench-bench-rate-{name}-"))
            tally = await guard.round(name, lambda: run_arm(args, arm, api, root))  # noqa: B023
            results[name] = (_report(arm, tally, api, args), tally)
    if "live" in results:
        throughput, tally = results["live"]
        share = tally.throttled / max(1, tally.sent)
        print(
            guard.ratio_line(
                "live throughput over the buckets' rate", throughput, ">= 0.90", throughput >= 0.9
            )
        )
        print(guard.ratio_line("live share of 429 answers", share, "<= 0.01", share <= 0.01))
        print(
            guard.ratio_line(
                "live attempts run again for a rate limit", tally.again, "0", tally.again == 0
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
