"""A request body is held to its limit while it streams in, and a refusal is ledgered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from durabench.gateway.ledger import read_entries
from durabench.gateway.request import MAX_REQUEST_BYTES
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply

MODEL = "claude-haiku-4-5"


def _never(received: Received) -> Reply:
    raise AssertionError("an oversized body reached the API")


async def test_a_body_past_the_limit_is_refused_as_it_streams_in_and_ledgered(
    tmp_path: Path,
) -> None:
    pulled = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal pulled
        chunk = b"x" * (1 << 20)
        while pulled <= 2 * MAX_REQUEST_BYTES:
            pulled += len(chunk)
            yield chunk

    async with gateway_rig(tmp_path, _never) as rig:
        token = rig.grant(model=MODEL)
        async with httpx.AsyncClient(timeout=60) as client:
            try:
                answer = await client.post(
                    f"{rig.url}/anthropic/v1/messages",
                    headers={"x-api-key": token},
                    content=endless(),
                )
                status = answer.status_code
            except httpx.HTTPError:  # the gateway answered and closed while we still sent
                status = 413
        declared = await rig.send(
            "POST", "/anthropic/v1/messages", token, content=b"{}"
        )  # a small body is answered (upstream refuses nothing here: no model named)
    assert status == 413
    assert rig.upstream.received == []
    assert [(e.status, e.refused) for e in read_entries(rig.ledger)] == [
        (413, "size"),
        (403, "model"),
    ]
    assert declared.status_code == 403
