"""A restarted worker takes over its host's attempts at once, not after the heartbeat timeout.

The attempt's activity is scheduled with a heartbeat timeout of an hour, far beyond what
this test waits: it completes only because the restarted worker ends the attempt its
killed predecessor (kill -9) left started, and the retry comes to it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from runtime.orphans import LOST, end_orphaned_attempts, worker_identity
    from tests.workflows.harness import until

HEARTBEAT = timedelta(hours=1)
"""Longer than the test could ever wait: only a take-over lets the attempt end."""
BOUND = 1200
"""Polls (0.1 s apart, ~2 minutes) the test waits at most: room for a loaded server, and
a thirtieth of the heartbeat timeout."""


@workflow.defn(name="AgentRunWorkflow")
class LongHeartbeatAttempt:
    """The attempt workflow's agent phase as it is scheduled, with a very long heartbeat."""

    @workflow.run
    async def run(self, host_queue: str) -> str:
        return await workflow.execute_activity(
            "run_agent",
            "ref",
            result_type=str,
            task_queue=host_queue,
            start_to_close_timeout=2 * HEARTBEAT,
            heartbeat_timeout=HEARTBEAT,
            retry_policy=RetryPolicy(maximum_attempts=2),
        )


@activity.defn(name="run_agent")
async def reattach(ref: str) -> str:
    """The restarted worker's agent phase: it re-attaches and finds the session ended."""
    return "re-attached"


async def _started(proc: subprocess.Popen[str]) -> None:
    line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)  # type: ignore[union-attr]
    assert line.strip() == "agent", line


async def test_a_restarted_worker_takes_over_its_hosts_attempts_at_once(
    client: Client, temporal_address: str
) -> None:
    host, queue = f"h-{uuid.uuid4().hex[:6]}", f"wf-{uuid.uuid4().hex[:8]}"
    host_queue = f"{queue}/host/{host}"
    async with Worker(client, task_queue=queue, workflows=[LongHeartbeatAttempt]):
        doomed = subprocess.Popen(
            [sys.executable, "-m", "tests.workflows.doomed_worker", temporal_address,
             host_queue, host],
            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            handle = await client.start_workflow(
                LongHeartbeatAttempt.run, host_queue, id=f"attempt-{host}", task_queue=queue
            )
            await _started(doomed)

            async def listed() -> bool:
                query = f"WorkflowId = '{handle.id}' AND ExecutionStatus = 'Running'"
                return bool([w async for w in client.list_workflows(query)])

            await until(listed, "the attempt is listed as running", BOUND)
        finally:
            os.kill(doomed.pid, signal.SIGKILL)
            doomed.wait()
            doomed.stdout.close()  # type: ignore[union-attr]

        identity = worker_identity(host)  # the restarted worker, before it polls
        ended = await end_orphaned_attempts(client, host, identity)
        assert [(o.workflow_id, o.activity) for o in ended] == [(handle.id, "run_agent")]
        async with Worker(client, task_queue=host_queue, activities=[reattach], identity=identity):
            outcome = asyncio.ensure_future(handle.result())
            await until(outcome.done, "the attempt ended after the take-over", BOUND)
    assert outcome.result() == "re-attached"
    history = await handle.fetch_history()
    started = [
        e.activity_task_started_event_attributes
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    ]
    assert [s.attempt for s in started] == [2]  # the first attempt did not run to its end
    assert started[0].last_failure.application_failure_info.type == LOST
    assert started[0].identity == identity
