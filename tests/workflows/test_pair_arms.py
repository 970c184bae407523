"""A pair's two arms end on their own: neither is cut short by the other, nor by a report.

A pair tells its run it ended only once both lanes are torn down (the run closes as soon
as every pair has told it), and one arm's failure leaves the other's session to finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from starter.approve import approve_main
from tests.workflows.fakes import SLOW
from tests.workflows.harness import Env, start_run, until
from workflows import SuiteRunWorkflow, pair_workflow_id

MCP = "sourcegraph_full"


async def _events(handle: WorkflowHandle[Any, Any]) -> list[HistoryEvent]:
    return [e async for e in handle.fetch_history_events()]


async def _took(handle: WorkflowHandle[Any, Any], what: Callable[[HistoryEvent], bool]) -> bool:
    """Whether a workflow task completed after the first event that is ``what``."""
    try:
        events = await _events(handle)
    except RPCError as err:  # not started yet
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        return False
    first = next((i for i, e in enumerate(events) if what(e)), None)
    done = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    return first is not None and any(e.event_type == done for e in events[first:])


def _is(kind: EventType.ValueType) -> Callable[[HistoryEvent], bool]:
    return lambda e: e.event_type == kind


@pytest.mark.parametrize("env", [[SLOW]], indirect=True)
async def test_a_cancelled_pair_reports_only_once_both_lanes_are_torn_down(env: Env) -> None:
    mcp_teardown = env.rec.gates[f"teardown_sandbox/{SLOW}/{MCP}"] = asyncio.Event()
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: env.rec.calls.count("run_agent") == 2, "both agents run")
    await handle.cancel()
    pair = env.client.get_workflow_handle(pair_workflow_id(request.run_id, SLOW))
    child_cancelled = EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED
    await until(lambda: _took(pair, _is(child_cancelled)), "the pair took the baseline's end")
    mcp_teardown.set()  # the MCP lane's teardown, held until now, ends
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    live_when_the_run_closed = set(env.rec.live)
    events = await _events(pair)
    closed = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED
    closed_at = [i for i, e in enumerate(events) if e.event_type == closed]
    ended_at = [i for i, e in enumerate(events) if e.event_type == child_cancelled]
    assert len(ended_at) == 2 and len(closed_at) == 1
    assert closed_at[0] > max(ended_at)  # the run hears the close after both lanes went
    assert live_when_the_run_closed == set()


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_one_arms_failure_leaves_the_other_arms_session_to_finish(env: Env) -> None:
    # The baseline arm fails for good: its attempt finds no host, and the pair cannot
    # record that (an attempt that ran keeps its verdict whatever fails: not this one).
    env.rec.broken.update({"claim_host/t1/baseline", "record_attempt/t1/baseline"})
    mcp_agent = env.rec.gates[f"run_agent/t1/{MCP}"] = asyncio.Event()
    request, handle = await start_run(env, parallel=1, infra_retries=0)
    await approve_main(request.run_id, "ann", client=env.client)
    pair = env.client.get_workflow_handle(pair_workflow_id(request.run_id, "t1"))
    failed = EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED
    await until(lambda: _took(pair, _is(failed)), "the pair took the baseline arm's failure")
    mcp_agent.set()  # the MCP lane's agent, running all along, ends now
    outcome = await handle.result()
    assert outcome.status == "completed"
    assert [(a.lane, a.attempt, a.exit_class) for a in env.rec.attempts] == [(MCP, 1, "completed")]
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.done, progress.excluded, progress.by_class) == (1, 1, {"completed": 1})
    with pytest.raises(WorkflowFailureError):
        await pair.result()  # the failure stays on the record, in the pair's history
