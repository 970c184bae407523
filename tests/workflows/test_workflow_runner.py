"""Workers share durabench's own modules with their workflows instead of re-importing them.

A probe workflow, run in the sandbox every worker uses, compares the module objects it
imports with the host's: passed through, they are the same objects.
"""

from __future__ import annotations

import sys
import uuid
from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

from runtime.workflow_runner import PASSED_THROUGH, workflow_runner

_PROBED = ("workflows.policies", "workflows.agent_run", "durabench.models.results")


@workflow.defn
class ModuleProbe:
    """Returns the ids of the modules it imports in the sandbox."""

    @workflow.run
    async def run(self) -> list[int]:
        """``id()`` of each probed module as the sandbox sees it."""
        import importlib

        return [id(importlib.import_module(name)) for name in _PROBED]


async def test_the_sandbox_shares_durabench_modules_with_the_host(client: Client) -> None:
    import durabench.models.results  # noqa: F401  (the host's copies, to compare)
    import workflows.agent_run  # noqa: F401
    import workflows.policies  # noqa: F401

    queue = f"wf-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client, task_queue=queue, workflows=[ModuleProbe], workflow_runner=workflow_runner()
    ):
        # Without the pass-through the probe's imports fail its workflow task: the run
        # timeout turns that endless retry into a failure.
        seen = await client.execute_workflow(
            ModuleProbe.run, id=queue, task_queue=queue, run_timeout=timedelta(seconds=30)
        )
    assert seen == [id(sys.modules[name]) for name in _PROBED]
    assert {name.split(".")[0] for name in _PROBED} <= set(PASSED_THROUGH)
