"""The account pool's room rules against a token-bucket API, in virtual time.

A discrete-event model of a run: sessions of a number of turns (a request, then tool
time), each turn's answer from a token bucket per account (requests and input tokens a
minute, refilled evenly, Anthropic's headers, a 429 with ``retry-after`` when short); a
CLI that retries a 429 a few times honouring ``retry-after``, after which the session
ends on a rate limit and its attempt runs again; and arms that ask the real
:class:`~durabench.accounts.Pool` for a slot every ``poll`` seconds, carrying what the
real parser (:func:`~durabench.gateway.room.read_room`) read of the last answers, as the
gateway and the account activities do. No clock, no thread: the same inputs give the
same run.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from durabench.accounts import Pool
from durabench.gateway.room import read_room
from durabench.models.accounts import LeaseRequest, PoolAccount, PoolState, ReleaseRequest
from durabench.models.room import RoomReading

__all__ = ["Shape", "Outcome", "simulate"]

T0 = datetime(2026, 1, 1, tzinfo=UTC)
A = "anthropic-ratelimit-"


@dataclass(frozen=True)
class Shape:
    """What is run, against what."""

    sessions: int = 40
    turns: int = 10
    accounts: int = 2
    slots: int = 8
    parallel: int = 40
    """Sessions the run asks to have at once (slots still bound them)."""
    rpm: int = 60
    itpm: int = 100_000
    tokens: int = 2_000
    """Input tokens a request."""
    think: float = 2.5
    latency: float = 0.2
    startup: float = 0.0
    """Seconds from a lease to the session's first request (a sandbox's start)."""
    retries: int = 4
    poll: float = 1.0
    live: bool = True
    """Whether the pool follows the API's rooms (else: slots only, as before)."""
    seed: int = 1


@dataclass
class Outcome:
    """What the run met."""

    sent: int = 0
    throttled: int = 0
    answered: int = 0
    again: int = 0
    seconds: float = 0.0
    rate: float = 0.0
    """The buckets' binding rate, requests a minute, all accounts."""

    @property
    def throughput(self) -> float:
        """Answered requests a minute over the buckets' rate."""
        return self.answered / (self.seconds / 60) / self.rate

    @property
    def share_429(self) -> float:
        """Answers that were 429, of all requests sent."""
        return self.throttled / max(1, self.sent)


@dataclass
class _Run:
    shape: Shape
    pool: Pool
    buckets: dict[str, list[float]]
    book: dict[str, RoomReading] = field(default_factory=dict)
    seen: dict[str, set[str]] = field(default_factory=dict)
    events: list[tuple[float, int, str, Any]] = field(default_factory=list)
    queue: list[tuple[int, int]] = field(default_factory=list)
    out: Outcome = field(default_factory=Outcome)
    n: int = 0

    def at(self, t: float, kind: str, data: Any) -> None:
        self.n += 1
        heapq.heappush(self.events, (t, self.n, kind, data))

    def rooms(self) -> tuple[RoomReading, ...]:
        return tuple(self.book.values()) if self.shape.live else ()


def simulate(shape: Shape) -> Outcome:
    """Run ``shape`` to its end; what it met."""
    rnd = random.Random(shape.seed)
    names = [f"a{i}" for i in range(shape.accounts)]
    accounts = tuple(PoolAccount(id=a, agent="claude-code", slots=shape.slots) for a in names)
    run = _Run(
        shape,
        Pool(PoolState(accounts=accounts)),
        {a: [float(shape.rpm), float(shape.itpm), 0.0] for a in names},
        seen={a: set() for a in names},
        queue=[(task, 1) for task in range(shape.sessions)],
    )
    for arm in range(shape.parallel):
        run.at(0.0, "ask", arm)
    while run.events:
        t, _, kind, data = heapq.heappop(run.events)
        if kind == "ask":
            _ask(run, t, data, rnd)
        else:
            _turn(run, t, data)
    run.out.rate = min(shape.rpm, shape.itpm / shape.tokens) * shape.accounts
    return run.out


def _ask(run: _Run, t: float, arm: int, rnd: random.Random) -> None:
    if not run.queue:
        return
    shape, (task, attempt) = run.shape, run.queue[0]
    req = LeaseRequest(
        agent="claude-code",
        model="m" if shape.live else "",
        paced=shape.live,
        holder_workflow_id=f"t{task}",
        holder_run_id="r",
        label=f"task {task}",
        lease_id=f"{task}-{attempt}",
        rooms=run.rooms(),
    )
    grant = run.pool.grant(req, req.lease_id, T0 + timedelta(seconds=t))
    if grant.lease is None:
        run.at(t + shape.poll * rnd.uniform(0.5, 1.5), "ask", arm)
        return
    run.queue.pop(0)
    session = {"arm": arm, "account": grant.lease.account_id, "lease": req.lease_id}
    run.at(t + shape.startup, "turn", session | {"task": task, "attempt": attempt, "turn": 0})


def _turn(run: _Run, t: float, s: dict[str, Any]) -> None:
    shape, account = run.shape, s["account"]
    now = T0 + timedelta(seconds=t + shape.latency)
    bucket = run.buckets[account]
    bucket[0] = min(shape.rpm, bucket[0] + (t - bucket[2]) * shape.rpm / 60)
    bucket[1] = min(shape.itpm, bucket[1] + (t - bucket[2]) * shape.itpm / 60)
    bucket[2] = t
    run.out.sent += 1
    ok = bucket[0] >= 1 and bucket[1] >= shape.tokens
    if ok:
        bucket[0] -= 1
        bucket[1] -= shape.tokens
        run.out.answered += 1
    headers = {}
    for kind, level, limit in (
        ("requests", bucket[0], shape.rpm),
        ("input-tokens", bucket[1], shape.itpm),
    ):
        reset = now + timedelta(seconds=(limit - level) * 60 / limit)
        headers |= {
            f"{A}{kind}-limit": str(limit),
            f"{A}{kind}-remaining": str(max(0, int(level))),
            f"{A}{kind}-reset": reset.isoformat().replace("+00:00", "Z"),
        }
    if not ok:
        need = max(1 - bucket[0], (shape.tokens - bucket[1]) * shape.rpm / shape.itpm)
        headers["retry-after"] = str(max(1, int(need * 60 / shape.rpm + 0.999)))
    run.seen[account].add(s["lease"])
    reading = read_room("anthropic", account, "m", 200 if ok else 429, headers, now)
    if reading is not None:
        run.book[account] = reading.model_copy(
            update={"host": "h", "sessions": len(run.seen[account])}
        )
    if ok:
        s = s | {"turn": s["turn"] + 1, "tries": 0}
        if s["turn"] < shape.turns:
            run.at(t + shape.latency + shape.think, "turn", s)
            return
        _end(run, t + shape.latency, s, limited=False)
        return
    run.out.throttled += 1
    tries = s.get("tries", 0)
    if tries < shape.retries:
        run.at(t + shape.latency + int(headers["retry-after"]), "turn", s | {"tries": tries + 1})
        return
    _end(run, t + shape.latency, s, limited=True)


def _end(run: _Run, t: float, s: dict[str, Any], limited: bool) -> None:
    now = T0 + timedelta(seconds=t)
    run.seen[s["account"]].discard(s["lease"])
    cool = now + timedelta(seconds=30) if limited else None
    run.pool.release(ReleaseRequest(lease_id=s["lease"], cool_until=cool, rooms=run.rooms()), now)
    if limited:
        run.out.again += 1
        run.queue.append((s["task"], s["attempt"] + 1))
    run.out.seconds = max(run.out.seconds, t)
    run.at(t, "ask", s["arm"])
