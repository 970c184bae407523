"""A pair started while its run is paused (or as the pause comes) honours the pause.

The run's pause signal may reach a pair that is not started yet and be lost; the pair's
input carries the run's control state, and the run re-sends it once the pair started.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from typing import Any

import pytest
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import (
    Interceptor,
    SignalExternalWorkflowInput,
    StartChildWorkflowInput,
    Worker,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

from durabench.models.agent import AgentSpec
from durabench.models.pair import PairInput
from durabench.models.run import TaskRef
from starter.approve import approve_main
from starter.control import pause_main
from starter.resume import resume_main
from tests.workflows.fakes import Recorder
from tests.workflows.harness import Env, RunHandle, start_run, until
from workflows import WORKFLOWS, PairedTaskWorkflow, SuiteRunWorkflow, pair_workflow_id


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_a_pair_started_paused_holds_its_retry_until_resume(env: Env) -> None:
    env.rec.classes["t1/baseline"] = ["infra_rate_limit", "completed"]
    run_id = f"r-{uuid.uuid4().hex[:8]}"
    pair = PairInput(
        run_id=run_id,
        task=TaskRef(task_id="t1", task_dir="/tasks/t1"),
        lanes=("baseline",),
        agent=AgentSpec(name="oracle", model="m"),
        infra_retries=1,
        infra_backoff_sec=0.1,
        paused=True,  # the run was paused when it started this pair
        control_seq=1,
    )
    handle = await env.client.start_workflow(
        PairedTaskWorkflow.run, pair, id=pair_workflow_id(run_id, "t1"), task_queue=env.rec.queue
    )

    async def held() -> bool:
        arms = (await handle.query(PairedTaskWorkflow.progress)).arms
        return bool(arms) and arms[0].state == "paused"

    await until(held, "the arm's retry is held by the pause it started under")
    assert [a.attempt for a in env.rec.attempts] == [1]
    await handle.signal(PairedTaskWorkflow.resume, 2)
    result = await handle.result()
    assert [a.exit_class for a in result.attempts] == ["infra_rate_limit", "completed"]


class _StartPairAfterPauseMissedIt(Interceptor):
    """Test only: the run starts its first pair only once its ``pause`` failed to reach it.

    The pair is then in the run's running set but does not exist yet when the pause is
    broadcast, and the server fails that signal: the production race, made certain.
    Waiting for the signal's answer (not only for the run's ``pause``) matters: a start
    and a signal sent in one workflow task may reach the server in either order.
    """

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        return _Inbound


class _Inbound(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_Outbound(outbound))


class _Outbound(WorkflowOutboundInterceptor):
    def __init__(self, next: WorkflowOutboundInterceptor) -> None:
        super().__init__(next)
        self._pause_answered = self._held = False

    async def signal_external_workflow(self, input: SignalExternalWorkflowInput) -> None:
        try:
            await super().signal_external_workflow(input)
        finally:
            self._pause_answered |= input.signal == "pause"

    async def start_child_workflow(self, input: StartChildWorkflowInput) -> Any:
        if input.workflow == "PairedTaskWorkflow" and not self._held:
            self._held = True
            await workflow.wait_condition(lambda: self._pause_answered)
        return await super().start_child_workflow(input)


async def _settled(handle: RunHandle) -> bool:
    """The run ended the workflow task that saw its pair start; its signals were answered.

    Whatever the run sends the new pair is then in the pair's history: the test lets the
    pair's agent end only after that, so no outcome depends on timing.
    """
    kinds = [event.event_type async for event in handle.fetch_history_events()]
    if EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED not in kinds:
        return False
    after = kinds[kinds.index(EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED) :]
    sent = kinds.count(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)
    answered = kinds.count(EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED)
    answered += kinds.count(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED)
    return EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED in after and sent == answered


async def test_a_pause_that_missed_a_starting_pair_reaches_it_once_started(
    client: Client,
) -> None:
    """The run re-sends its pause to a pair it was starting when the pause came.

    Without the re-send (``_start_pair``'s ``handle.signal`` after the start) this fails:
    the pause never reaches the pair, whose baseline arm retries its infra failure at once
    and completes while the run is paused (the pair closes instead of holding its retry).
    """
    rec = Recorder(queue=f"wf-{uuid.uuid4().hex[:8]}", task_ids=["t1"])
    rec.classes["t1/baseline"] = ["infra_rate_limit", "completed"]
    rec.gates["run_agent/t1/baseline"] = gate = asyncio.Event()
    async with Worker(
        client,
        task_queue=rec.queue,
        workflows=list(WORKFLOWS),
        activities=rec.activities(),
        interceptors=[_StartPairAfterPauseMissedIt()],
    ):
        env = Env(client, rec)
        request, handle = await start_run(env, parallel=1)
        await approve_main(request.run_id, "ann", client=client)

        async def starting() -> bool:  # the start waits in the interceptor
            return bool((await handle.query(SuiteRunWorkflow.progress)).running)

        await until(starting, "the run starts its pair")
        await pause_main(request.run_id, "ann", client=client)
        await until(lambda: _settled(handle), "the run started its pair and settled")
        kinds = [event.event_type async for event in handle.fetch_history_events()]
        missed = EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED
        assert missed in kinds, "the run's pause should have missed the unstarted pair"
        gate.set()  # the baseline arm's attempt 1 ends infra: it would retry now
        pair = client.get_workflow_handle_for(
            PairedTaskWorkflow.run, pair_workflow_id(request.run_id, "t1")
        )

        async def baseline() -> str | None:
            if (await pair.describe()).close_time is not None:
                return "closed"
            arms = {a.lane: a.state for a in (await pair.query(PairedTaskWorkflow.progress)).arms}
            return arms.get("baseline")

        await until(lambda: _in(baseline(), ("paused", "closed")), "the arm pauses or ends")
        assert await baseline() == "paused", "the pair should hold its retry while paused"
        assert [(a.lane, a.attempt) for a in rec.attempts if a.lane == "baseline"] == [
            ("baseline", 1)
        ]
        await resume_main(request.run_id, client=client, detach=True)
        assert (await handle.result()).status == "completed"
        assert [a.exit_class for a in rec.attempts if a.lane == "baseline"] == [
            "infra_rate_limit",
            "completed",
        ]


async def _in(state: Awaitable[str | None], states: tuple[str, ...]) -> bool:
    return await state in states
