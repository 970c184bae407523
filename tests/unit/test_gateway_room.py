"""The gateway reads each answer's room into its book; a provider's 429 stays infra.

Through the real gateway app (the rig) in front of a scripted API: what the API's headers
said lands in ``rooms.json`` per account and model (the asked model: an auxiliary one has
its own limits), and an attempt that ended on the API's 429 is classified
``infra_rate_limit`` exactly as before the pool read rooms: the reading changes which
sessions start next, never how an ended one is judged.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from durabench.classify import classify
from durabench.gateway import read_ledger
from durabench.gateway.room_book import read_rooms
from durabench.models.verdict import ClassifyInput
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
A = "anthropic-ratelimit-"


def _api(received: Received) -> Reply:
    """Room for the first request; the second is refused for the account's rate limit."""
    if received.body.get("max_tokens") == 1:
        reply = anthropic_stream(MODEL, [{"type": "text", "text": "ok"}])
        reply.headers.update({f"{A}requests-limit": "30", f"{A}requests-remaining": "29"})
        return reply
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    return Reply(
        status=429,
        body=error,
        headers={
            f"{A}requests-limit": "30",
            f"{A}requests-remaining": "0",
            "retry-after": "20",
        },
    )


async def test_answers_fill_the_book_and_a_provider_429_stays_infra(tmp_path: Path) -> None:
    async with gateway_rig(tmp_path, _api) as rig:
        token = rig.grant(account="team-a", model=MODEL)
        body = {"model": MODEL, "max_tokens": 1, "stream": True, "messages": []}
        ok = await rig.send("POST", "/anthropic/v1/messages", token, json=body)
        after_ok = json.loads((tmp_path / "gateway/rooms.json").read_text())
        refused = await rig.send(
            "POST", "/anthropic/v1/messages", token, json={**body, "max_tokens": 2}
        )
    assert (ok.status_code, refused.status_code) == (200, 429)
    assert [(r["account"], r["model"], r["requests"]["remaining"]) for r in after_ok] == [
        ("team-a", MODEL, 29)
    ]
    (reading,) = read_rooms(tmp_path / "gateway", datetime.fromtimestamp(time.time(), tz=UTC))
    assert reading.requests is not None and reading.requests.remaining == 0
    assert reading.full_until is not None
    assert 19 <= (reading.full_until - reading.observed_at).total_seconds() <= 20
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.rate_limited == 1
    verdict = classify(
        ClassifyInput(
            events=({"type": "system", "subtype": "init", "model": MODEL},),
            transcript_format="claude-code",
            requested_model=MODEL,
            timed_out=False,
            exit_code=1,
            metered=metered,
            model_via_gateway=True,
        )
    )
    assert verdict.exit_class == "infra_rate_limit"


def test_a_rooms_file_that_is_not_the_books_reads_as_nothing(tmp_path: Path) -> None:
    now = datetime.fromtimestamp(time.time(), tz=UTC)
    for text in ["", "{", "[1, 2]", '{"a": 1}', '[{"provider": "x"}]', "\u0000" * 10]:
        (tmp_path / "rooms.json").write_text(text)
        assert read_rooms(tmp_path, now) == ()
    assert read_rooms(tmp_path / "missing", now) == ()


async def test_a_long_stream_that_ends_after_a_429_does_not_undo_it(tmp_path: Path) -> None:
    """A stream's reading is as of its headers: ending after a 429, it is the older news.

    Its answer began (29 of 30 left) before another session's 429 (none left, wait 20 s)
    and ended after it: the book keeps the 429's numbers and its wait.
    """
    release = threading.Event()

    def api(received: Received) -> Reply:
        reply = _api(received)
        reply.hold = release if reply.events is not None else None
        return reply

    async with gateway_rig(tmp_path, api) as rig:
        token = rig.grant(account="team-a", model=MODEL)
        body = {"model": MODEL, "max_tokens": 1, "stream": True, "messages": []}
        headers = {"x-api-key": token}
        async with (
            httpx.AsyncClient(timeout=30) as client,
            client.stream(
                "POST", f"{rig.url}/anthropic/v1/messages", headers=headers, json=body
            ) as long,
        ):
            assert long.status_code == 200  # its headers are in; its body is held
            refused = await rig.send(
                "POST", "/anthropic/v1/messages", token, json={**body, "max_tokens": 2}
            )
            release.set()
            await long.aread()
    assert refused.status_code == 429
    (reading,) = read_rooms(tmp_path / "gateway", datetime.fromtimestamp(time.time(), tz=UTC))
    assert reading.requests is not None and reading.requests.remaining == 0
    assert reading.full_until is not None
