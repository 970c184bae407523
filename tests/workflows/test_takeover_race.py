"""A take-over fails the attempt it saw, never a retry another worker started meanwhile.

Two workers of one host restarting at once both describe the dead worker's attempt; the
first fails it, its retry starts on a live worker, and the second's describe is stale.
Failing by activity id would fail that live retry. Real dev server; the attempt's
activity waits on events the test sets.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from runtime.orphans import (
        LOST,
        fail_attempt,
        started_attempts,
        started_by_dead_peer,
        worker_identity,
    )
    from runtime.worker_place import identity_at, this_place


@workflow.defn(name="TakeoverRaceAttempt")
class OneActivity:
    """An attempt's phase, retried at once after a failure."""

    @workflow.run
    async def run(self, ref: str) -> str:
        return await workflow.execute_activity(
            "run_agent",
            ref,
            result_type=str,
            start_to_close_timeout=timedelta(minutes=5),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(milliseconds=100), maximum_attempts=3
            ),
        )


class Steps:
    """``run_agent`` whose attempts say when they start and end when the test says."""

    def __init__(self) -> None:
        self.started: defaultdict[int, asyncio.Event] = defaultdict(asyncio.Event)
        self.go: defaultdict[int, asyncio.Event] = defaultdict(asyncio.Event)

    @activity.defn(name="run_agent")
    async def run_agent(self, ref: str) -> str:
        n = activity.info().attempt
        self.started[n].set()
        await self.go[n].wait()
        if n == 1:
            raise ApplicationError("the dead worker's attempt", type="Boom")
        return f"attempt {n}"


@asynccontextmanager
async def _attempt(client: Client) -> AsyncIterator[tuple[WorkflowHandle[Any, str], Steps]]:
    """An attempt whose first try has started, and the steps that drive it."""
    queue, steps = f"race-{uuid.uuid4().hex[:8]}", Steps()
    async with Worker(client, task_queue=queue, workflows=[OneActivity],
                      activities=[steps.run_agent]):  # fmt: skip
        handle = await client.start_workflow(
            OneActivity.run, "ref", id=f"race-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
        await asyncio.wait_for(steps.started[1].wait(), 60)
        yield handle, steps


async def test_a_stale_take_over_does_not_fail_the_retry_that_runs_now(client: Client) -> None:
    async with _attempt(client) as (handle, steps):
        stale = await started_attempts(client, handle.id)
        assert [(a.activity, a.attempt) for a in stale] == [("run_agent", 1)]

        steps.go[1].set()  # another worker's take-over ended it; the retry runs
        await asyncio.wait_for(steps.started[2].wait(), 60)
        lost = ApplicationError("took over late", type=LOST)
        assert not await fail_attempt(client, stale[0], lost)

        steps.go[2].set()
        assert await asyncio.wait_for(handle.result(), 60) == "attempt 2"


async def test_the_attempt_it_saw_is_failed(client: Client) -> None:
    async with _attempt(client) as (handle, steps):
        seen = await started_attempts(client, handle.id)
        assert await fail_attempt(client, seen[0], ApplicationError("lost", type=LOST))
        await asyncio.wait_for(steps.started[2].wait(), 60)  # the retry: the failure took
        steps.go[1].set()
        steps.go[2].set()
        assert await asyncio.wait_for(handle.result(), 60) == "attempt 2"


def _ended_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_only_workers_known_dead_are_taken_for_dead() -> None:
    here = this_place()
    me = worker_identity("h1")

    def dead(peer: str) -> bool:
        return started_by_dead_peer(peer, "h1", me, here)

    assert me.endswith("@h1") and worker_identity("h1") != me  # unique per process start
    assert not dead(me)  # its own
    assert not dead(identity_at(here, "h1"))  # another worker of this very process
    assert not dead(identity_at(here._replace(pid=_ended_pid()), "h12"))  # another host's
    sibling = here._replace(pid_ns="1", node="0badc0de")  # a sibling container
    assert not dead(identity_at(sibling, "h1"))  # even with this process's pid
    assert not dead(identity_at(sibling._replace(pid_ns=""), "h1"))
    assert not dead(f"{os.getpid()}-abcdef@h1")  # a worker that recorded no place
    assert not dead("123@h1")

    assert dead(identity_at(here._replace(pid=_ended_pid()), "h1"))  # its process ended
    assert dead(identity_at(here._replace(started="1"), "h1"))  # its pid went to another
    assert dead(identity_at(here._replace(pid_ns="1"), "h1"))  # this container, restarted
    assert dead(identity_at(here._replace(boot="0" * 12), "h1"))  # the machine rebooted

    bare = here._replace(started="", pid_ns="", boot="", node="")  # no /proc anywhere
    gone = identity_at(bare._replace(pid=_ended_pid()), "h1")
    assert started_by_dead_peer(gone, "h1", me, bare)
    assert not started_by_dead_peer(identity_at(bare, "h1"), "h1", me, bare)
