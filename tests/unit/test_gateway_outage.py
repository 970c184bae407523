"""A gateway that died is the harness's failure, and the ledgers of the attempts it served say so.

The agent cannot write its ledger (it lives on the host) and cannot tell the worker's
supervisor that the gateway died: the supervisor sees the process exit. So the line the
supervisor adds to each live attempt's ledger is evidence the agent cannot forge, and
only attempts that held a grant at that moment get it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import httpx
import pytest

from durabench.gateway import Grant, GrantStore, ModelGateway
from durabench.gateway.budget import Budgets
from durabench.gateway.inflight import InFlight
from durabench.gateway.ledger import read_entries, read_ledger
from durabench.gateway.outage import record_outage
from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream

MODEL = "claude-sonnet-4-5"


def _grant(store: GrantStore, tmp_path: Path, attempt: str, budget: int | None = None) -> Path:
    ledger = tmp_path / f"{attempt}.jsonl"
    doc: dict[str, object] = {
        "budget_tokens": budget,
        "attempt": attempt,
        "agent": "claude-code",
        "provider": "anthropic",
        "model": MODEL,
        "ledger": str(ledger),
    }
    store.grant(Grant.model_validate(doc))
    return ledger


def test_every_live_attempt_gets_the_outage_and_an_ended_one_does_not(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "gateway")
    live = _grant(store, tmp_path, "run-1-a-baseline-1")
    ended = _grant(store, tmp_path, "run-1-b-baseline-1")
    store.revoke("run-1-b-baseline-1")

    assert record_outage(store, "gateway restarted") == 1

    metered = read_ledger(live)
    assert metered is not None
    assert (metered.last_status, metered.last_refused) == (502, "gateway restarted")
    assert metered.rate_limited == metered.auth_refused == metered.overloaded == 0
    assert not ended.exists()


def test_no_grants_no_lines(tmp_path: Path) -> None:
    assert record_outage(GrantStore(tmp_path / "gateway"), "gateway restarted") == 0


async def test_a_request_the_gateway_died_serving_is_its_outage_whenever_the_death_is_seen(
    tmp_path: Path,
) -> None:
    """The agent gives up on its cut request and its grant is revoked before anyone notices.

    As on a loaded worker: the session ends, the agent phase revokes the grant, and only
    then does the worker see the gateway's process gone (here, the classify step's
    ``settle``). The ledger must still say that the gateway died serving that request.
    """
    arrived, release = threading.Event(), threading.Event()

    def held(received: Received) -> Reply:
        arrived.set()
        release.wait(60)
        return anthropic_stream(MODEL, [{"type": "text", "text": "late"}])

    with ModelUpstream(held) as upstream:
        environ = {"ANTHROPIC_API_KEY": "sk-ant-real", "ANTHROPIC_BASE_URL": upstream.url}
        gateway = ModelGateway(
            tmp_path / "gw", "unused", 0, tmp_path / "a.toml", environ, bind_host="127.0.0.1"
        )
        try:
            url = await gateway.url()
            if gateway._watch is not None:  # the worker is too busy to see the exit itself
                gateway._watch.cancel()
            ledger = _grant(gateway.store, tmp_path, "run-1-a-baseline-1", budget=100_000)
            token = gateway.store.token_for("run-1-a-baseline-1")
            asked = asyncio.create_task(_ask(url, token))
            await asyncio.to_thread(arrived.wait, 60)
            process = gateway.supervisor.process
            assert process is not None
            os.kill(process.pid, signal.SIGKILL)
            # Gone for good, as it long is when an attempt is classified: its sockets close
            # (the agent sees the cut) a moment before the process can be reaped.
            await asyncio.to_thread(process.wait, 60)
            with pytest.raises(httpx.HTTPError):  # the agent's request is cut ...
                await asyncio.wait_for(asked, 60)
            gateway.store.revoke("run-1-a-baseline-1")  # ... it gives up, its phase ends
            await gateway.settle()  # then the worker reads its ledger
        finally:
            release.set()
            await gateway.aclose()

    metered = read_ledger(ledger)
    assert metered is not None
    assert (metered.last_status, metered.last_refused) == (502, "gateway restarted")
    # Its budget reservation (the 64 output tokens it asked for, and its body) stays charged.
    assert read_entries(ledger)[-1].charged > 64


async def _ask(url: str, token: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=60) as client:
        return await client.post(
            f"{url}/anthropic/v1/messages",
            headers={"x-api-key": token, "anthropic-version": "2023-06-01"},
            json={"model": MODEL, "stream": True, "max_tokens": 64, "messages": []},
        )


def test_what_the_dead_gateway_held_in_flight_stays_charged_to_the_budget(
    tmp_path: Path,
) -> None:
    """Two requests of one attempt in flight (reserved 500 and 700 tokens of its budget)
    when the gateway process died: their answers may have been billed, and nobody metered
    them. The restarted gateway's budget starts from the ledger's ``charged``: 1,200, not 0
    (else the attempt could pass its budget by every request cut so)."""
    store = GrantStore(tmp_path / "gateway")
    ledger = _grant(store, tmp_path, "run-1-a-baseline-1")
    notes = InFlight(store.root, pid=4242)
    with (
        notes.serving(ledger, "anthropic", tokens=500),
        notes.serving(ledger, "anthropic", tokens=700),
    ):
        assert record_outage(store, "gateway restarted", pid=4242) == 1
    assert Budgets().held(str(ledger)) == (1_200, 0)
    assert [e.refused for e in read_entries(ledger)] == ["gateway restarted"]
