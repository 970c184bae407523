"""A run's wait for the pairs it carried across continue-as-new never dies unheard.

``await_pairs`` (the wait on the server for a carried pair to close) runs beside the
run's main task: an error it ends with is no one's to hear, and the run would wait for a
pair it no longer watches, its slot held, its report never written. It retries without a
count; a failure no retry fixes fails the run, saying why.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError, WorkflowHandle

from starter.approve import approve_main
from tests.workflows.fakes import SLOW
from tests.workflows.harness import Env, start_run, until
from workflows import SuiteRunWorkflow, pair_workflow_id, run_workflow_id

WATCH = "await_pairs/run/pairs"


async def _carried_slow_pair(env: Env) -> tuple[str, WorkflowHandle[Any, Any]]:
    """A run that carried the slow pair across continue-as-new; its latest handle."""
    request, handle = await start_run(env, parallel=2, pairs_per_run=2)
    first = (await handle.describe()).run_id
    await approve_main(request.run_id, "ann", client=env.client)
    latest = env.client.get_workflow_handle_for(
        SuiteRunWorkflow.run, run_workflow_id(request.run_id)
    )
    await until(lambda: _moved_on(latest, first), "the run continued as new")
    await until(lambda: (SLOW, "baseline") in env.rec.live, "the slow pair's agent runs")
    return request.run_id, latest


async def _moved_on(handle: WorkflowHandle[Any, Any], first: str) -> bool:
    return (await handle.describe()).run_id != first


async def _closed(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await handle.describe()).close_time is not None


@pytest.mark.parametrize("env", [[SLOW, "t2", "t3"]], indirect=True)
async def test_a_watch_that_fails_more_than_three_times_goes_on(env: Env) -> None:
    env.rec.failures[WATCH] = 6
    run_id, latest = await _carried_slow_pair(env)
    await until(lambda: env.rec.failures[WATCH] == 0, "the watch failed six times")
    pair = env.client.get_workflow_handle(pair_workflow_id(run_id, SLOW))
    await pair.terminate("an operator ended it by hand")
    await until(lambda: _closed(latest), "the run ended", tries=600)
    outcome = await latest.result()
    progress = await latest.query(SuiteRunWorkflow.progress)
    assert outcome.status == "completed"
    assert (progress.done, progress.excluded, progress.ended_abnormally) == (3, 1, (SLOW,))


@pytest.mark.parametrize("env", [[SLOW, "t2", "t3"]], indirect=True)
async def test_a_watch_that_cannot_go_on_fails_the_run_saying_why(env: Env) -> None:
    env.rec.broken.add(WATCH)
    run_id, latest = await _carried_slow_pair(env)
    await until(lambda: _closed(latest), "the run ended", tries=600)
    with pytest.raises(WorkflowFailureError) as failed:
        await latest.result()
    assert "cannot hear" in str(failed.value.cause) and SLOW in str(failed.value.cause)
    pair = env.client.get_workflow_handle(pair_workflow_id(run_id, SLOW))
    await pair.cancel()  # its sandboxes torn down before the worker stops
    await until(lambda: not env.rec.live, "the slow pair's sandboxes are torn down", 600)


MANY = [f"p{n:02d}" for n in range(21)]


@pytest.mark.parametrize("env", [MANY], indirect=True)
async def test_each_wait_for_carried_pairs_names_at_most_a_group_of_them(env: Env) -> None:
    """20 pairs carried across continue-as-new: two waits (16 and 4), not one of 20 that
    every close asks again for the rest (the pairs in flight squared in history)."""
    env.rec.agent_gate = asyncio.Event()  # every agent runs until the test lets it end
    request, handle = await start_run(env, parallel=20, pairs_per_run=20)
    first = (await handle.describe()).run_id
    await approve_main(request.run_id, "ann", client=env.client)
    latest = env.client.get_workflow_handle_for(
        SuiteRunWorkflow.run, run_workflow_id(request.run_id)
    )
    await until(lambda: _moved_on(latest, first), "the run continued as new")
    await until(lambda: _waits(latest), "the carried pairs are waited for")
    env.rec.agent_gate.set()
    assert (await latest.result()).status == "completed"
    waits = await _waits(latest)
    assert max(waits) <= 16
    assert sorted(waits[:2]) == [4, 16]  # the first wait of each group: 16 and 4 pairs


async def _waits(handle: WorkflowHandle[Any, Any]) -> list[int]:
    """How many pairs each ``await_pairs`` the run scheduled named."""
    sizes = []
    async for event in handle.fetch_history_events():
        if event.event_type != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            continue
        attrs = event.activity_task_scheduled_event_attributes
        if attrs.activity_type.name == "await_pairs":
            sizes.append(len(json.loads(attrs.input.payloads[0].data)["pairs"]))
    return sizes
