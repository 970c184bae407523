"""The workers' sandbox imports durabench's workflow code once, and still checks it.

A probe workflow compares the module objects its sandbox sees across instances and with
the host's; a workflow that calls the clock, randomness, ids or the process must fail
its workflow task, whether its module is imported per instance or once, as ``workflows``
is.
"""

from __future__ import annotations

import sys
import uuid
from datetime import timedelta
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker, WorkflowRunner

from runtime.workflow_runner import PASSED_THROUGH, SHARED, workflow_runner
from tests.workflows.harness import until
from tests.workflows.sandbox_probes import CALLS, PROBED, CallsTheClock, ModuleProbe

_PROBE_MODULE = CallsTheClock.__module__


async def test_the_sandbox_imports_workflows_once_and_shares_durabench(client: Client) -> None:
    import durabench.models.results  # noqa: F401  (the host's copies, to compare)
    import workflows.agent_run  # noqa: F401
    import workflows.policies  # noqa: F401

    queue = f"wf-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client, task_queue=queue, workflows=[ModuleProbe], workflow_runner=workflow_runner()
    ):
        # Without the pass-through the probe's imports fail its workflow task: the run
        # timeout turns that endless retry into a failure.
        limit = timedelta(seconds=30)
        seen = [
            await client.execute_workflow(
                ModuleProbe.run, id=f"{queue}-{n}", task_queue=queue, run_timeout=limit
            )
            for n in range(2)
        ]
    host = [id(sys.modules[name]) for name in PROBED]
    assert seen[0] == seen[1]  # imported once, for every instance
    assert seen[0][2] == host[2]  # durabench: the host's own
    assert seen[0][0] != host[0] and seen[0][1] != host[1]  # workflows: the sandbox's copies
    assert "durabench" in PASSED_THROUGH


def _shared_like_workflows() -> WorkflowRunner:
    """The production runner, with the probe's module imported once, as ``workflows`` is."""
    return workflow_runner(shared=(*SHARED, _PROBE_MODULE))


@pytest.mark.parametrize("shared", [False, True], ids=["imported-per-instance", "shared"])
async def test_workflow_code_that_calls_the_clock_fails_its_task(
    client: Client, shared: bool
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    runner = _shared_like_workflows() if shared else workflow_runner()
    async with Worker(client, task_queue=queue, workflows=[CallsTheClock], workflow_runner=runner):
        for call in CALLS:
            handle = await client.start_workflow(
                CallsTheClock.run, call, id=f"{queue}-{call}", task_queue=queue
            )
            await until(lambda h=handle: _task_failed(h), f"{call} failed its workflow task")
            failure = await _task_failed(handle)
            await handle.terminate("checked")
            assert "RestrictedWorkflowAccessError" in failure or "Cannot access" in failure, (
                call,
                failure,
            )


async def _task_failed(handle: Any) -> str:
    """The failure message of the workflow's first failed task ("" if none failed)."""
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
            return str(event.workflow_task_failed_event_attributes.failure)
    return ""
