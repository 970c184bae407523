"""An unapproved run ends itself after its approval timeout (time-skipping test server)."""

from __future__ import annotations

import uuid

from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from durabench.models.run import RunRequest
from durabench.models.suite_run import SuiteRunInput
from tests.workflows.fakes import Recorder
from workflows import WORKFLOWS, SuiteRunWorkflow, run_workflow_id


async def test_a_run_nobody_approves_expires_after_its_timeout(
    skipping: WorkflowEnvironment,
) -> None:
    queue = f"ts-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=["t1", "t2"])
    request = RunRequest(run_id="r-expiring", suite="s", approval_timeout_sec=24 * 3600)
    async with Worker(
        skipping.client, task_queue=queue, workflows=list(WORKFLOWS), activities=rec.activities()
    ):
        outcome = await skipping.client.execute_workflow(
            SuiteRunWorkflow.run,
            SuiteRunInput(request=request),
            id=run_workflow_id(request.run_id),
            task_queue=queue,
        )
        assert outcome.status == "expired"
        assert "nobody approved the plan within 1 day" in outcome.reason
        assert rec.calls == ["plan_run"]  # nothing that costs money started
        progress = await skipping.client.get_workflow_handle_for(
            SuiteRunWorkflow.run, run_workflow_id(request.run_id)
        ).query(SuiteRunWorkflow.progress)
        assert progress.phase == "expired"
