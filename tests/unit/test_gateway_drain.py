"""An ended attempt's requests in flight are ledgered before its ledger is read.

Twelve streams of 60k tokens left in flight as a session exited were ledgered after the
worker read the ledger. Now the worker waits for the attempt's in-flight notes to clear,
and the gateway cancels a request that outlives its revoked grant (here at once: its
grace set to 0), ledgering it ``cancelled`` and charging its whole reservation.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from durabench.gateway import ModelGateway
from durabench.gateway.inflight import InFlight
from durabench.gateway.ledger import CANCELLED, read_entries
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply

MODEL = "claude-haiku-4-5"


async def test_a_request_outliving_its_revoked_grant_is_cancelled_ledgered_and_charged(
    tmp_path: Path,
) -> None:
    release = threading.Event()

    def stalled(received: Received) -> Reply:
        release.wait(30)
        return Reply(body={"type": "message", "model": MODEL, "content": []})

    body = json.dumps({"model": MODEL, "max_tokens": 60_000, "messages": []}).encode()
    async with gateway_rig(tmp_path, stalled) as rig:
        rig.app.revoked.grace_s, rig.app.revoked.check_s = 0.0, 0.01
        token = rig.grant(model=MODEL, budget_tokens=1_000_000)
        left = asyncio.create_task(rig.send("POST", "/anthropic/v1/messages", token, content=body))
        while not rig.upstream.received:
            await asyncio.sleep(0.01)
        rig.store.revoke("run-1-task-1-baseline-1")  # the session ended with it in flight
        while not read_entries(rig.ledger):
            await asyncio.sleep(0.01)
        release.set()
        left.cancel()
    (line,) = read_entries(rig.ledger)
    assert line.refused == CANCELLED and line.charged == 60_000 + len(body) // 3
    assert rig.app.budgets.held(str(rig.ledger)) == (line.charged, 0)


async def test_the_worker_reads_a_ledger_only_once_nothing_of_its_attempt_is_in_flight(
    tmp_path: Path,
) -> None:
    gateway = ModelGateway(tmp_path / "gateway", "unused", 0, tmp_path / "a.toml", {})
    ledger = tmp_path / "gateway.jsonl"
    notes = InFlight(gateway.store.root, pid=4242)
    with notes.serving(ledger, "anthropic"):
        assert await gateway.drained(ledger, timeout=0.0) is False
        waiting = asyncio.create_task(gateway.drained(ledger))
        await asyncio.sleep(0)
        assert not waiting.done()
    assert await waiting is True
    assert await gateway.drained(tmp_path / "other.jsonl", timeout=0.0) is True
