"""A run's spend cap over two hosts: two gateways, their brokers, one book in Temporal.

Two hosts (each its own gateway app, grant store and broker, as two worker machines
have) serve concurrent sessions of one capped run against a scripted model API whose
every answer reports 1,000 input and 200 output tokens. At $3 / $15 per million tokens
an answer costs 1,000 x 3 + 200 x 15 = 6,000 micro-dollars ($0.006); a request asking
for at most 300 output tokens with a body of B bytes reserves at most
B / 3 x 3.75 (the dearest input rate, cache writes) + 300 x 15 micro-dollars.

The book is the real ``RunSpendWorkflow`` on a real Temporal server. The check: the
metered spend of both hosts, priced by hand from the ledgers, stays within the cap plus
one request's worst case; requests past the cap are refused (``spend cap``), and the
blocks flow between hosts (the spend comes near the cap, not half of it); once the
attempts have ended, every block is back in the book but what was spent.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from durabench.gateway.ledger import read_entries
from durabench.models.prices import Price
from durabench.spend import PairAsk, SpendState, SpendTerms
from durabench.spend.wire import spend_workflow_id
from runtime.spend_broker import tend_spend_every
from tests.gateway_rig import GatewayRig, gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream
from tests.workflows.harness import until
from workflows.run_spend import RunSpendWorkflow

MODEL = "claude-sonnet-4-5"
PRICE = Price(
    input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, source="test", as_of=date(2026, 11, 1)
)
CAP = 200_000
"""$0.20: about 33 answers of $0.006."""
BLOCK = 20_000
ANSWER_COST = 1_000 * 3 + 200 * 15
SESSIONS_PER_HOST = 4


def _answer(received: Received) -> Reply:
    return anthropic_stream(
        MODEL, [{"type": "text", "text": "ok"}], input_tokens=1_000, output_tokens=200
    )


PROMPT = {"role": "user", "content": "x" * 3_300}
"""A prompt the API counts as 1,000 input tokens: its bytes / 3 bound them from above."""


def _body() -> bytes:
    doc = {"model": MODEL, "max_tokens": 300, "stream": True, "messages": [PROMPT]}
    return json.dumps(doc).encode()


WORST = int(len(_body()) // 3 * 3.75 + 300 * 15) + 1


async def _session(rig: GatewayRig, run_id: str, task: str, attempt: str) -> list[int]:
    """An agent that asks until the gateway refuses it."""
    token = rig.grant(
        attempt=attempt,
        model=MODEL,
        ledger=str(rig.ledger.parent / f"{attempt}.jsonl"),
        spend=SpendTerms(run_id=run_id, task_id=task, rates=PRICE).model_dump(),
    )
    statuses = []
    for _ in range(40):
        answer = await rig.send("POST", "/anthropic/v1/messages", token, content=_body())
        statuses.append(answer.status_code)
        if answer.status_code != 200:
            assert "spend cap" in answer.json()["error"]["message"]
            break
    rig.store.revoke(attempt)
    return statuses


def _pair_cost(task: str, *rigs: GatewayRig) -> int:
    """What a pair's lanes cost by their ledgers, priced by hand."""
    return sum(
        e.usage.input * 3 + e.usage.output * 15
        for rig in rigs
        for ledger in rig.ledger.parent.glob(f"attempt-{task}-*.jsonl")
        for e in read_entries(ledger)
    )


def _metered(rig: GatewayRig) -> tuple[int, int]:
    """(micro-dollars of the answers, requests refused for the cap), from the ledgers."""
    cost = refused = 0
    for ledger in rig.ledger.parent.glob("attempt-*.jsonl"):
        for e in read_entries(ledger):
            cost += e.usage.input * 3 + e.usage.output * 15
            refused += e.refused == "spend cap"
    return cost, refused


@asynccontextmanager
async def _two_hosts(
    client: Client, tmp_path: Path, run_id: str
) -> AsyncIterator[tuple[GatewayRig, GatewayRig, WorkflowHandle[Any, SpendState]]]:
    """Two hosts' gateways and brokers, and the run's book on a real Temporal server."""
    queue = f"spend-{uuid.uuid4().hex[:6]}"
    stop = asyncio.Event()
    async with (
        Worker(client, task_queue=queue, workflows=[RunSpendWorkflow]),
        gateway_rig(tmp_path / "host-a", _answer) as a,
        gateway_rig(tmp_path / "host-b", _answer) as b,
    ):
        book = await client.start_workflow(
            RunSpendWorkflow.run,
            SpendState(cap=CAP, block=BLOCK),
            id=spend_workflow_id(run_id),
            task_queue=queue,
        )
        brokers = [
            asyncio.create_task(tend_spend_every(client, rig.store.root, host, stop, every=0.05))
            for host, rig in (("host-a", a), ("host-b", b))
        ]
        try:
            yield a, b, book
        finally:
            stop.set()
            await asyncio.gather(*brokers)
            if (await book.describe()).close_time is None:
                await book.signal(RunSpendWorkflow.close)


async def test_two_hosts_never_spend_past_the_run_s_cap(client: Client, tmp_path: Path) -> None:
    run_id = f"capped-{uuid.uuid4().hex[:6]}"
    async with _two_hosts(client, tmp_path, run_id) as (a, b, book):
        sessions = [
            _session(rig, run_id, f"task-{i}", f"attempt-{host}-{i}")
            for host, rig in (("a", a), ("b", b))
            for i in range(SESSIONS_PER_HOST)
        ]
        await asyncio.gather(*sessions)
        spent_a, refused_a = _metered(a)
        spent_b, refused_b = _metered(b)
        spent = spent_a + spent_b
        assert spent <= CAP + WORST, f"spent {spent} of a cap of {CAP}"
        assert spent >= CAP - 2 * (BLOCK + WORST) * 2, "blocks went unused"
        assert spent_a > 0 and spent_b > 0
        assert refused_a + refused_b == 2 * SESSIONS_PER_HOST

        async def returned() -> bool:
            state = await book.query(RunSpendWorkflow.snapshot)
            return sum(state.held.values()) == spent

        await until(returned, "every block given back but what was spent")
        await book.signal(RunSpendWorkflow.close)
        state = await book.result()
    by_host = {h: sum(t.values()) for h, t in state.spent.items()}
    assert by_host == {"host-a": spent_a, "host-b": spent_b}


PAIR_EXPECTED = 80_000
"""$0.08 a pair: what the plan would expect (each lane asks 6 answers, $0.036)."""
ANSWERS = 6


async def _lane(rig: GatewayRig, run_id: str, task: str, lane: str) -> int:
    """One lane's session of ``ANSWERS`` requests; how many were answered."""
    attempt = f"attempt-{task}-{lane}"
    token = rig.grant(
        attempt=attempt,
        model=MODEL,
        ledger=str(rig.ledger.parent / f"{attempt}.jsonl"),
        spend=SpendTerms(run_id=run_id, task_id=task, rates=PRICE).model_dump(),
    )
    answered = 0
    for _ in range(ANSWERS):
        answer = await rig.send("POST", "/anthropic/v1/messages", token, content=_body())
        if answer.status_code != 200:
            break
        answered += 1
    rig.store.revoke(attempt)
    return answered


async def test_pairs_start_whole_across_two_hosts_and_the_rest_are_not_run(
    client: Client, tmp_path: Path
) -> None:
    """Each pair's baseline lane runs on host A, its MCP lane on host B, at once.

    The run's rule, as the run applies it: pairs start when the book affords them (two at
    a time here), the rest wait for a pair to end, and once none runs and none fits the
    run stops. Every pair that started ran both lanes; the spend of both hosts stays
    within the cap plus one request's worst case; the pairs left are named.
    """
    run_id = f"pairs-{uuid.uuid4().hex[:6]}"
    tasks = [f"task-{i}" for i in range(8)]
    async with _two_hosts(client, tmp_path, run_id) as (a, b, book):
        lanes: dict[str, tuple[int, int]] = {}
        pending, ended = list(tasks), dict[str, int]()
        running: dict[str, asyncio.Task[tuple[int, int]]] = {}

        async def pair(task: str) -> tuple[int, int]:
            got = await asyncio.gather(
                _lane(a, run_id, task, "base"), _lane(b, run_id, task, "mcp")
            )
            return got[0], got[1]

        while pending:
            ask = PairAsk(tasks=tuple(pending[:2]), expected=PAIR_EXPECTED, ended=ended)
            answer = await book.execute_update(RunSpendWorkflow.start_pairs, ask)
            ended = {}
            for task in answer.started:
                running[task] = asyncio.create_task(pair(task))
                pending.remove(task)
            if len(answer.started) < len(ask.tasks) and not running:
                break  # the cap is reached: the rest are not run
            if running:
                done, _ = await asyncio.wait(running.values(), return_when=asyncio.FIRST_COMPLETED)
                for task in [t for t, job in running.items() if job in done]:
                    lanes[task] = running.pop(task).result()
                    ended[task] = _pair_cost(task, a, b)  # as its attempts' results say
        for task, job in running.items():
            lanes[task] = await job
    spent = _metered(a)[0] + _metered(b)[0]
    assert spent <= CAP + WORST, f"spent {spent} of a cap of {CAP}"
    assert pending, "the cap left pairs not run"
    assert set(lanes) | set(pending) == set(tasks)
    for task, (base, mcp) in lanes.items():  # never half a pair
        assert base > 0 and mcp > 0, f"{task} ran {base} baseline and {mcp} MCP answers"
