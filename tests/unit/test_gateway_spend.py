"""The gateway's side of a run's spend cap: each request reserved in dollars from its block.

At $3 / $15 / $0.30 / $3.75 per million tokens, an answer of 1,000 input and 200 output
tokens costs 1,000 x 3 + 200 x 15 = 6,000 micro-dollars; a request of B body bytes asking
for 300 output tokens reserves B // 3 x 3.75 + 300 x 15.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.gateway.ledger import (
    CANCELLED,
    GATEWAY_ERROR,
    UPSTREAM_CUT,
    LedgerEntry,
    costs_whole_hold,
    read_entries,
    read_ledger,
)
from durabench.gateway.meter import ResponseUsage
from durabench.gateway.spend_gate import (
    SPEND_CAP,
    UNSETTLED_AT_RESTART,
    SpendCapReached,
    SpendGate,
)
from durabench.models.prices import Price
from durabench.spend import Held, SpendFiles, SpendTerms
from durabench.spend.purse import Hold
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream

MODEL = "claude-sonnet-4-5"
PRICE = Price(
    input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, source="t", as_of=date(2026, 11, 1)
)
TERMS = SpendTerms(run_id="run-1", task_id="t1", rates=PRICE)


def _answer(received: Received) -> Reply:
    return anthropic_stream(
        MODEL, [{"type": "text", "text": "ok"}], input_tokens=1_000, output_tokens=200
    )


PROMPT = {"role": "user", "content": "x" * 3_300}
"""A prompt the API counts as 1,000 input tokens: its bytes / 3 bound them from above."""


def _body() -> bytes:
    doc = {"model": MODEL, "max_tokens": 300, "stream": True, "messages": [PROMPT]}
    return json.dumps(doc).encode()


WORST = len(_body()) // 3 * 3.75 + 300 * 15


async def test_a_request_within_the_block_goes_and_is_charged_its_metered_cost(
    tmp_path: Path,
) -> None:
    async with gateway_rig(tmp_path, _answer) as rig:
        SpendFiles(rig.store.root, "run-1").write_held(Held(run_id="run-1", held=10_000))
        token = rig.grant(model=MODEL, spend=TERMS.model_dump())
        first = await rig.send("POST", "/anthropic/v1/messages", token, content=_body())
        assert first.status_code == 200
        used = SpendFiles(rig.store.root, "run-1").used()
        assert (used.spent, used.reserved) == ({"t1": 6_000}, 0)
        # 4,000 left does not cover a worst case of ~8,600: with a short wait and no
        # broker to bring more, the request is refused, and never reaches the API.
        rig.app.spend.wait_s = 0.2
        second = await rig.send("POST", "/anthropic/v1/messages", token, content=_body())
    assert second.status_code == 429
    assert "spend cap does not cover this request" in second.json()["error"]["message"]
    assert len(rig.upstream.received) == 1
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.spend_capped
    assert [e.refused for e in read_entries(rig.ledger)] == ["", "spend cap"]


async def test_a_request_the_book_refused_is_refused_at_once(tmp_path: Path) -> None:
    """The gateway would wait ten minutes; the broker answers its ask with a refusal."""
    async with gateway_rig(tmp_path, _answer) as rig:
        files = SpendFiles(rig.store.root, "run-1")
        files.write_held(Held(run_id="run-1", held=0))
        rig.app.spend.wait_s = 600
        token = rig.grant(model=MODEL, spend=TERMS.model_dump())

        async def broker() -> None:
            while files.used().want == 0:
                await asyncio.sleep(0.02)
            files.write_held(Held(run_id="run-1", held=0, refused=files.used().asked))

        answer, _ = await asyncio.wait_for(
            asyncio.gather(
                rig.send("POST", "/anthropic/v1/messages", token, content=_body()), broker()
            ),
            timeout=60,
        )
    assert answer.status_code == 429 and not rig.upstream.received
    assert files.used().want == 0, "a refused request asks for nothing any more"


async def test_an_unpriced_model_is_refused_under_a_cap(tmp_path: Path) -> None:
    async with gateway_rig(tmp_path, _answer) as rig:
        unpriced = SpendTerms(run_id="run-1", task_id="t1", rates=None)
        token = rig.grant(model=MODEL, spend=unpriced.model_dump())
        answer = await rig.send("POST", "/anthropic/v1/messages", token, content=_body())
    assert answer.status_code == 429 and "has no price" in answer.json()["error"]["message"]
    assert not rig.upstream.received


def test_a_restarted_gateway_goes_on_from_what_it_charged(tmp_path: Path) -> None:
    """Charged 6,000 of a 10,000 block, then restarted: 4,000 is all that is left."""
    files = SpendFiles(tmp_path, "run-1")
    files.write_held(Held(run_id="run-1", held=10_000))
    gate = SpendGate(tmp_path, wait_s=0)
    hold = asyncio.run(gate.reserve(TERMS, 5_000))
    entry = LedgerEntry(
        at=0,
        provider="anthropic",
        path="/v1/messages",
        status=200,
        usage=ResponseUsage(input=1_000, output=200),
    )
    gate.settle(TERMS, hold, entry)
    again = SpendGate(tmp_path, wait_s=0)
    assert again._purse("run-1")[0].spent == {"t1": 6_000}
    assert asyncio.run(again.reserve(TERMS, 4_000)).amount == 4_000


def test_a_success_that_reported_no_usage_is_charged_its_whole_hold(tmp_path: Path) -> None:
    SpendFiles(tmp_path, "run-1").write_held(Held(run_id="run-1", held=10_000))
    gate = SpendGate(tmp_path, wait_s=0)
    hold = asyncio.run(gate.reserve(TERMS, 4_600))
    entry = LedgerEntry(at=0, provider="anthropic", path="/v1/messages", status=200)
    gate.settle(TERMS, hold, entry)
    assert SpendFiles(tmp_path, "run-1").used().spent == {"t1": 4_600}


def test_a_restarted_gateway_counts_what_was_in_flight_as_spent(tmp_path: Path) -> None:
    """5,000 held by a request in flight when the gateway died: its answer may have been
    charged by the API, and nobody settled it. The restarted gateway counts it spent, so
    only 5,000 of the 10,000 block is left, never the whole block again."""
    files = SpendFiles(tmp_path, "run-1")
    files.write_held(Held(run_id="run-1", held=10_000))
    asyncio.run(SpendGate(tmp_path, wait_s=0).reserve(TERMS, 5_000))  # then the process dies
    again = SpendGate(tmp_path, wait_s=0)
    with pytest.raises(SpendCapReached):
        asyncio.run(again.reserve(TERMS, 5_001))
    assert asyncio.run(again.reserve(TERMS, 5_000)).amount == 5_000
    used = files.used()
    assert sum(used.spent.values()) == 5_000, "the broker reports it to the book as spent"
    assert used.spent[UNSETTLED_AT_RESTART] == 5_000 and used.reserved == 5_000


# A step on one gateway's purse: reserve an amount, settle the oldest hold at a share of
# it (tokens at $3 per million: 3 micro-dollars each), or restart the gateway.
_OP = st.one_of(
    st.tuples(st.just("reserve"), st.integers(1, 4_000)),
    st.tuples(st.just("settle"), st.integers(0, 100)),
    st.tuples(st.just("restart"), st.just(0)),
)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(_OP, max_size=25))
def test_restarts_never_let_a_host_spend_past_its_block(ops: list[tuple[str, int]]) -> None:
    """The family: whenever the gateway restarts, what its requests may have cost (charged
    when settled, the whole hold when the process died with it in flight, held when still
    out) never passes the block."""
    with tempfile.TemporaryDirectory() as root:
        SpendFiles(Path(root), "run-1").write_held(Held(run_id="run-1", held=10_000))
        gate = SpendGate(Path(root), wait_s=0)
        holds: list[Hold] = []
        may_cost = 0  # charged, or lost in flight at a restart
        for kind, n in ops:
            if kind == "reserve":
                with contextlib.suppress(SpendCapReached):
                    holds.append(asyncio.run(gate.reserve(TERMS, n)))
            elif kind == "settle" and holds:
                hold = holds.pop(0)
                tokens = hold.amount * n // 100 // 3
                usage = ResponseUsage(input=tokens)
                entry = LedgerEntry(
                    at=0, provider="anthropic", path="/v1/messages", status=200, usage=usage
                )
                gate.settle(TERMS, hold, entry)
                may_cost += max(tokens * 3, hold.amount if not tokens else 0)
            elif kind == "restart":
                may_cost += sum(h.amount for h in holds)
                holds, gate = [], SpendGate(Path(root), wait_s=0)
            assert may_cost + sum(h.amount for h in holds) <= 10_000


def _settled(tmp_path: Path, entry: LedgerEntry | None, hold_amount: int = 4_600) -> int:
    """What the gate charges a hold of ``hold_amount`` settled with ``entry``."""
    files = SpendFiles(tmp_path, "run-1")
    files.write_held(Held(run_id="run-1", held=10_000_000))
    gate = SpendGate(tmp_path, wait_s=0)
    before = sum(files.used().spent.values())
    gate.settle(TERMS, asyncio.run(gate.reserve(TERMS, hold_amount)), entry)
    return sum(files.used().spent.values()) - before


def test_a_stream_the_host_lost_after_its_input_was_metered_costs_its_whole_hold(
    tmp_path: Path,
) -> None:
    """message_start said 1,000 input tokens ($0.003), then the stream was cut: the API
    bills the answer it went on writing, which nobody metered. 4,600 is charged, not 3,000."""
    entry = LedgerEntry(
        at=0,
        provider="anthropic",
        path="/v1/messages",
        status=200,
        refused=UPSTREAM_CUT,
        usage=ResponseUsage(input=1_000),
    )
    assert _settled(tmp_path, entry) == 4_600


_REFUSALS = ("", CANCELLED, UPSTREAM_CUT, GATEWAY_ERROR, "upstream unreachable", SPEND_CAP)


@pytest.mark.parametrize("refused", _REFUSALS)
@pytest.mark.parametrize("status", [200, 429, 499, 500, 502])
@pytest.mark.parametrize("tokens", [0, 1_000, 2_000])
def test_a_request_is_charged_its_meter_unless_its_answer_may_have_cost_more(
    tmp_path: Path, refused: str, status: int, tokens: int
) -> None:
    """The family, over every kind of ending: the metered cost (3 micro-dollars an input
    token) at the least; the whole hold (4,600) when the answer may have been billed past
    its meter (cut short, or a success that reported nothing); the spend cap and the
    token budget charge by the same rule (:func:`~durabench.gateway.ledger.costs_whole_hold`)."""
    usage = ResponseUsage(input=tokens)
    entry = LedgerEntry(
        at=0, provider="anthropic", path="/v1/messages", status=status, refused=refused, usage=usage
    )
    whole = refused in (CANCELLED, UPSTREAM_CUT) or (status == 200 and not tokens)
    assert costs_whole_hold(entry.status, entry.refused, tokens) is whole
    assert _settled(tmp_path, entry) == (max(4_600, tokens * 3) if whole else tokens * 3)
