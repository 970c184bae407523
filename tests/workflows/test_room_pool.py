"""The pool follows what the API says is left, deployment-wide, from the gateway's readings.

A scripted API answers through the real gateway (on loopback, the rig) with falling
``anthropic-ratelimit-requests-remaining`` headers; the gateway writes what it read in
its ``rooms.json``; the real account activities of two hosts (each its own home, so its
own gateway directory) carry their host's readings to one pool workflow on the session's
dev server with every lease and release. Host 1's gateway sees the account fill up; a
lease asked through host 2, whose gateway saw nothing, is refused all the same; when a
session has ended and the API says it recovered, a new one starts. A running session is
never touched: leases held stay.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from activities import AccountActivities
from durabench.models.accounts import (
    LeaseGrant,
    LeaseRequest,
    PoolAccount,
    PoolState,
    ReleaseRequest,
)
from durabench.settings.values import Settings
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream
from workflows import AccountPoolWorkflow, pool_workflow_id

MODEL = "claude-haiku-4-5"
LIMIT = 30
SETTLE = 0.6
"""The pool's settle time here, in seconds (15 by default): the test waits it out."""


def _api(remaining: list[int]) -> object:
    """Each answer states the next of ``remaining`` out of 30 requests a minute."""

    def answer(received: Received) -> Reply:
        left = remaining.pop(0)
        reply = anthropic_stream(MODEL, [{"type": "text", "text": "ok"}])
        reset = datetime.fromtimestamp(time.time() + 2 * (LIMIT - left), tz=UTC)
        reply.headers.update(
            {
                "anthropic-ratelimit-requests-limit": str(LIMIT),
                "anthropic-ratelimit-requests-remaining": str(left),
                "anthropic-ratelimit-requests-reset": reset.isoformat().replace("+00:00", "Z"),
            }
        )
        return reply

    return answer


async def test_leases_follow_the_apis_remaining_across_hosts(
    client: Client, tmp_path: Path
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    hosts = [
        AccountActivities(client, Settings(home=tmp_path / f"host{n}", task_queue=queue))
        for n in (1, 2)
    ]
    n = 0

    async def lease(host: AccountActivities) -> LeaseGrant:
        nonlocal n
        n += 1
        req = LeaseRequest(
            agent="claude-code",
            model=MODEL,
            paced=True,
            holder_workflow_id=f"arm-{n}",
            holder_run_id="r",
            label=f"arm {n}",
            lease_id=f"lease-{n}",
        )
        grant: LeaseGrant = await ActivityEnvironment().run(host.lease_account, req)
        return grant

    remaining = [29, 28, 5, 29]
    async with (
        Worker(client, task_queue=queue, workflows=[AccountPoolWorkflow], activities=[]),
        gateway_rig(tmp_path / "host1", _api(remaining)) as rig,  # type: ignore[arg-type]
    ):
        accounts = (PoolAccount(id="a", agent="claude-code", slots=8),)
        pool = await client.start_workflow(
            AccountPoolWorkflow.run,
            PoolState(accounts=accounts, room_settle_sec=SETTLE),
            id=pool_workflow_id(queue),
            task_queue=queue,
        )
        tokens = [
            rig.grant(account="a", model=MODEL, attempt=f"run-1-t{n}-baseline-1") for n in (1, 2)
        ]
        body = {"model": MODEL, "max_tokens": 10, "stream": True, "messages": []}

        async def turn(token: str) -> None:
            answer = await rig.send("POST", "/anthropic/v1/messages", token, json=body)
            assert answer.status_code == 200

        first = [await lease(hosts[1]) for _ in range(2)]  # nothing known: two may start
        assert all(g.lease is not None for g in first)
        waiting = await lease(hosts[1])  # the API has said nothing of them yet
        assert waiting.lease is None and waiting.room and "answers" in waiting.why

        await asyncio.sleep(SETTLE)
        await turn(tokens[0])  # 29 of 30 left
        await turn(tokens[1])  # 28 of 30: both sessions answered
        book = json.loads((tmp_path / "host1/gateway/rooms.json").read_text())
        assert [(r["account"], r["sessions"]) for r in book] == [("a", 2)]
        assert (await lease(hosts[0])).lease is not None  # room: one more starts

        await asyncio.sleep(SETTLE)
        await turn(tokens[0])  # 5 of 30 left (17 %)
        full = [await lease(hosts[0]), await lease(hosts[1])]  # host 2 saw nothing itself
        assert [g.lease for g in full] == [None, None]
        assert all(g.room and "17% of its rate limit is left" in g.why for g in full)

        ended = first[0].lease
        assert ended is not None  # a session ends: one fewer runs than the 3 started
        release = ReleaseRequest(lease_id=ended.lease_id)
        await ActivityEnvironment().run(hosts[1].release_account, release)
        await asyncio.sleep(SETTLE)
        await turn(tokens[1])  # recovered: 29 of 30, both sessions answered
        assert (await lease(hosts[0])).lease is not None  # host 1's activity carries it
        state = await pool.query(AccountPoolWorkflow.snapshot)
        await pool.terminate()
    assert len(state.leases) == 3  # the sessions started and not ended are all still held
    (room,) = state.rooms
    assert room.latest is not None and room.latest.requests is not None
    assert (room.account, room.model, room.latest.requests.remaining) == ("a", MODEL, 29)
