"""An agent cannot buy itself a rate limit: each attempt keeps to its share of the account's.

The account's requests-per-minute limit is the API's word (its rate-limit headers, as the
gateway sees them); an attempt's share is that limit over the attempts the gateway serves
on the account. A request past the share in the last minute is refused by the gateway
(429, ledgered ``rate share``: the agent's); an API 429 on a request that went out beyond
the share (sent before the limit was known) is marked so in the ledger, and a session
that ends in the API's 429 after going past its share is the agent's doing: no
``infra_rate_limit``, no retry, no cooled account (issue 52, defect 3).
"""

from __future__ import annotations

import asyncio
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from durabench.accounts import account_cooldown
from durabench.classify import classify
from durabench.gateway import read_ledger
from durabench.gateway.grants import Grant
from durabench.gateway.ledger import LedgerEntry, append_entry, read_entries
from durabench.gateway.meter import ResponseUsage
from durabench.gateway.rate_share import RateShares
from durabench.gateway.refusals import Refused, place, refuse
from durabench.gateway.request import AgentRequest
from durabench.models.verdict import ClassifyInput
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
LIMIT = {"anthropic-ratelimit-requests-limit": "4", "anthropic-ratelimit-requests-remaining": "3"}
BODY = json.dumps({"model": MODEL, "max_tokens": 10, "messages": []}).encode()


def _limited(received: Received) -> Reply:
    """An API whose account may make 4 requests a minute, as its headers say."""
    reply = anthropic_stream(MODEL, [{"type": "text", "text": "ok"}])
    reply.headers.update(LIMIT)
    return reply


async def test_an_attempt_past_its_share_is_refused_by_the_gateway_and_the_other_is_served(
    tmp_path: Path,
) -> None:
    """Limit 4 a minute, two attempts on the account: a share of 2 each."""
    async with gateway_rig(tmp_path, _limited) as rig:
        first = rig.grant(model=MODEL, attempt="run-1-t-mcp-1", ledger=str(tmp_path / "a.jsonl"))
        other = rig.grant(model=MODEL, attempt="run-1-t-base-1", ledger=str(tmp_path / "b.jsonl"))
        statuses = [
            (await rig.send("POST", "/anthropic/v1/messages", first, content=BODY)).status_code
            for _ in range(3)
        ]
        refused = await rig.send("POST", "/anthropic/v1/messages", first, content=BODY)
        served = [
            (await rig.send("POST", "/anthropic/v1/messages", other, content=BODY)).status_code
            for _ in range(2)
        ]
    assert statuses == [200, 200, 429] and refused.status_code == 429
    assert "share" in refused.json()["error"]["message"]
    # When the share has room again, where every CLI reads it: a retry honouring it is
    # served. Without it a CLI's own backoff (seconds) ran out against a minute's window,
    # and honest sessions ended on the gateway's 429s, scored as the agent's.
    wait = refused.headers.get("retry-after", "")
    assert wait.isdigit() and 1 <= int(wait) <= 60, refused.headers
    assert f"retry in {wait} s" in refused.json()["error"]["message"]
    assert served == [200, 200]
    assert len(rig.upstream.received) == 4  # 2 of each attempt; the refused never went out
    lines = read_entries(tmp_path / "a.jsonl")
    assert [(e.status, e.refused, e.beyond_share, e.rate_share) for e in lines] == [
        (200, "", False, 2),  # placed with no limit known; its answer stated one
        (200, "", False, 2),
        (429, "rate share", True, 2),
        (429, "rate share", True, 2),
    ]
    metered = read_ledger(tmp_path / "a.jsonl")
    assert metered is not None and metered.rate_limited == 0  # none of them the API's
    assert metered.beyond_share == 2


def test_requests_sent_before_the_limit_was_known_are_judged_by_it_when_it_comes() -> None:
    """Six at once before any answer: with a limit of 4 (one attempt), the 5th and 6th
    went out beyond the share; the next request is refused."""
    now = [1000.0]
    shares = RateShares(lambda account: 1, clock=lambda: now[0])
    account = ("anthropic", "")
    sent = [shares.admit("a", account) for _ in range(6)]
    assert [s.refused for s in sent] == [False] * 6 and [s.position for s in sent] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    shares.learn(account, LIMIT)
    assert [shares.beyond(account, s.position) for s in sent] == [False] * 4 + [True] * 2
    assert shares.admit("a", account).refused
    now[0] += 61  # a minute on, the window is empty again
    assert not shares.admit("a", account).refused


def _ledger(path: Path, *lines: tuple[int, bool]) -> None:
    """An answered request, then ``(status, beyond its share)`` lines."""
    usage = ResponseUsage(model=MODEL, output=5)
    first = LedgerEntry(
        at=1, provider="anthropic", path="/v1/messages", status=200, asked_model=MODEL, usage=usage
    )
    append_entry(path, first)
    for n, (status, beyond) in enumerate(lines):
        entry = LedgerEntry(
            at=2 + n,
            provider="anthropic",
            path="/v1/messages",
            status=status,
            asked_model=MODEL,
            retry_after="30",
            beyond_share=beyond,
        )
        append_entry(path, entry)


def _verdict(path: Path) -> tuple[str, str]:
    metered = read_ledger(path)
    verdict = classify(
        ClassifyInput(
            events=({"type": "system", "subtype": "init", "model": MODEL},),
            transcript_format="claude-code",
            requested_model=MODEL,
            timed_out=True,
            exit_code=137,
            metered=metered,
            model_via_gateway=True,
        )
    )
    now = datetime(2026, 11, 29, tzinfo=UTC)
    cooled = account_cooldown(verdict.exit_class, metered, now, timedelta(hours=1), timedelta(5))
    if verdict.exit_class != "infra_rate_limit":
        assert cooled is None  # the agent's own rate limit cools no account
    return verdict.exit_class, verdict.reason


def test_a_429_after_the_attempt_went_past_its_share_is_the_agents(tmp_path: Path) -> None:
    own = tmp_path / "own.jsonl"
    _ledger(own, (429, False), (429, True), (429, False))  # the last 429 follows the excess
    exit_class, reason = _verdict(own)
    assert exit_class == "model_timeout", reason
    assert "past its share of the account's rate limit" in reason


def test_a_429_with_no_excess_stays_the_providers(tmp_path: Path) -> None:
    honest = tmp_path / "honest.jsonl"
    _ledger(honest, (429, False), (429, False))
    assert _verdict(honest)[0] == "infra_rate_limit"


def test_a_stream_that_failed_for_a_rate_limit_after_the_excess_is_the_agents_too(
    tmp_path: Path,
) -> None:
    """The family: a rate limit the API reports inside a 200 stream (Anthropic's ``error``
    event) after the attempt went past its share is the agent's, as a 429 is."""
    streamed = tmp_path / "streamed.jsonl"
    _ledger(streamed, (429, True))
    failed = ResponseUsage(model=MODEL, error="rate_limit_error")
    append_entry(
        streamed,
        LedgerEntry(at=9, provider="anthropic", path="/v1/messages", status=200, usage=failed),
    )
    assert _verdict(streamed)[0] == "model_timeout"
    honest = tmp_path / "honest.jsonl"
    _ledger(honest)
    append_entry(
        honest,
        LedgerEntry(at=9, provider="anthropic", path="/v1/messages", status=200, usage=failed),
    )
    assert _verdict(honest)[0] == "infra_rate_limit"


def test_a_request_within_its_share_when_sent_stays_within_it_when_the_share_shrinks() -> None:
    """Placed third with a share of 4 (one attempt), it is not judged again by the share
    of 2 that a second attempt starting on the account makes while it is answered: an
    honest attempt is not made the cause of a 429 by others arriving."""
    attempts = [1]
    shares = RateShares(lambda account: attempts[0], clock=lambda: 1000.0)
    shares.learn(("anthropic", ""), LIMIT)
    grant = Grant(attempt="a", agent="claude-code", provider="anthropic", model=MODEL, ledger="")
    placed = []
    for _ in range(3):
        req = AgentRequest("anthropic", "/v1/messages", "POST", {}, [])
        place(shares, grant, req)
        placed.append(req)
    attempts[0] = 2
    for req in placed:
        assert req.on_answer is not None
        req.on_answer(LIMIT)
    assert [(r.beyond_share, r.rate_share) for r in placed] == [(False, 4)] * 3


@given(
    status=st.sampled_from([400, 403, 408, 413, 429, 500, 502, 503]),
    wait=st.floats(min_value=0, max_value=3600, allow_nan=False),
)
def test_every_429_and_503_the_gateway_answers_itself_says_when_to_retry(
    status: int, wait: float
) -> None:
    """Whatever refused it (a share, a body in flight, a spend cap, no key here)."""
    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    class Req:
        recorded: list[tuple[int, str]] = []

        def record(self, status: int, refused: str) -> None:
            self.recorded.append((status, refused))

    asyncio.run(refuse(send, Req(), Refused(status, "why", "kind", "msg", wait)))  # type: ignore[arg-type]
    headers = dict(sent[0]["headers"])  # type: ignore[call-overload]
    if status in (429, 503):
        assert headers[b"retry-after"] == str(max(1, math.ceil(wait))).encode()
    else:
        assert b"retry-after" not in headers
