"""A worker that stops with attempts mid-flight leaves their cleanup to a later worker.

A stopped worker does not evict the workflows it holds: their suspended coroutines stay
until Python collects them, and collecting one throws ``GeneratorExit`` into it. A
``finally`` that schedules cleanup then issues its commands through whatever workflow's
event loop is running at that moment. The probe workflow below collects them inside its
own activation, as the next workflow of a long-lived process would by chance.
"""

from __future__ import annotations

import asyncio
import gc
import uuid
from datetime import timedelta
from types import CoroutineType
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from runtime.workflow_runner import workflow_runner
from starter.approve import approve_main
from tests.workflows.fakes import Recorder
from tests.workflows.harness import Env, scheduled, start_run, until
from workflows import WORKFLOWS, attempt_workflow_id

_HELD: list[Any] = []
"""Coroutines left behind by the stopped worker, kept alive until the probe lets go."""

LANES = ("baseline", "sourcegraph_full")


@activity.defn(name="probe_step")
async def probe_step() -> None:
    """The probe's own (and only) activity."""


@workflow.defn(sandboxed=False)
class ProbeWorkflow:
    """Collects what a stopped worker left, in its activation; then runs its own step."""

    @workflow.run
    async def run(self) -> None:
        _HELD.clear()
        gc.collect()
        await workflow.execute_activity(probe_step, start_to_close_timeout=timedelta(seconds=30))


def _pending_coroutines() -> list[Any]:
    return [o for o in gc.get_objects() if isinstance(o, CoroutineType) and o.cr_frame is not None]


def _worker(client: Client, rec: Recorder) -> Worker:
    return Worker(
        client,
        task_queue=rec.queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=rec.activities(),
        max_heartbeat_throttle_interval=timedelta(seconds=1),
    )


async def test_attempts_a_stopped_worker_left_clean_up_once_and_only_in_their_own_history(
    client: Client,
) -> None:
    rec = Recorder(queue=f"wf-{uuid.uuid4().hex[:8]}", task_ids=["t1"])
    rec.agent_gate = asyncio.Event()
    gc.disable()  # nothing is collected before the probe's activation collects it
    try:
        async with _worker(client, rec):
            req, handle = await start_run(Env(client, rec), parallel=1)
            await approve_main(req.run_id, "ann", client=client)
            await until(lambda: rec.in_agent == 2, "both attempts in their agent")
        _HELD.extend(_pending_coroutines())
    finally:
        gc.enable()

    probe_queue = f"probe-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=probe_queue,
        workflows=[ProbeWorkflow],
        activities=[probe_step],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        probe = await client.start_workflow(
            ProbeWorkflow.run, id=f"probe-{uuid.uuid4().hex[:8]}", task_queue=probe_queue
        )
        await probe.result()
    assert scheduled([e async for e in probe.fetch_history_events()]) == ["probe_step"]

    rec.agent_gate.set()
    async with _worker(client, rec):
        assert (await handle.result()).status == "completed"
    assert sorted(rec.torn_down) == [("t1", lane) for lane in LANES]
    for lane in LANES:
        attempt = client.get_workflow_handle(attempt_workflow_id(req.run_id, "t1", lane, 1))
        events = [e async for e in attempt.fetch_history_events()]
        assert scheduled(events).count("finish_sandbox") == 1


async def test_a_worker_caching_one_workflow_runs_a_suite_to_the_end_cleaning_up_once(
    client: Client,
) -> None:
    """Every activation evicts another workflow: none takes its eviction for its own end.

    An evicted run waiting for its pairs is cancelled by the SDK like a cancelled run; it
    must not set about cancelling them (the SDK refuses what it starts, and a coroutine
    it made is left unawaited).
    """
    rec = Recorder(queue=f"wf-{uuid.uuid4().hex[:8]}", task_ids=["t1", "t2"])
    rec.agent_gate = asyncio.Event()
    async with Worker(
        client,
        task_queue=rec.queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=rec.activities(),
        max_cached_workflows=1,
    ):
        req, handle = await start_run(Env(client, rec), parallel=2)
        await approve_main(req.run_id, "ann", client=client)
        await until(lambda: rec.in_agent == 4, "four attempts in their agent")
        rec.agent_gate.set()
        assert (await handle.result()).status == "completed"
    assert sorted(rec.torn_down) == [(t, lane) for t in ("t1", "t2") for lane in LANES]
    for task in ("t1", "t2"):
        for lane in LANES:
            attempt = client.get_workflow_handle(attempt_workflow_id(req.run_id, task, lane, 1))
            assert scheduled([e async for e in attempt.fetch_history_events()]) == [
                "claim_host",
                "provision_sandbox",
                "run_agent",
                "verify",
                "finish_sandbox",
            ]
