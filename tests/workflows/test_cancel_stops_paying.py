"""Once a run's cancel is accepted no agent session starts, and no host slot stays claimed.

A phase is cancelled by asking its activity and waiting for the answer; an activity that
does not hear the ask (it is between heartbeats, or never beats) ends as if none came,
and Temporal hands its result back as if nothing was cancelled. Each test holds an
activity that way (the fakes' ``holds``: no heartbeat while held), cancels the run, waits
until the ask is in the history, then lets the activity end normally.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError

from starter.approve import approve_main
from tests.workflows.harness import Env, cancel_handled, has_event, start_run, until
from workflows import attempt_workflow_id

ASKED = EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED
LANES = ("baseline", "sourcegraph_full")
FINISHED = {"teardown_sandbox"}
"""Held activities a cancel does not ask to stop (the fakes' ``finish_sandbox`` removes the
container through ``teardown_sandbox``): the close-out of an attempt runs to its end."""


async def _cancel_while_held(env: Env, holding: str, **request: Any) -> str:
    """Start a one-task run, cancel it while ``holding`` is held in both lanes, release.

    Returns the run id, once the run has ended.
    """
    holds = {lane: asyncio.Event() for lane in LANES}
    for lane, event in holds.items():
        env.rec.holds[f"{holding}/t1/{lane}"] = event
    req, handle = await start_run(env, parallel=1, **request)
    await approve_main(req.run_id, "ann", client=env.client)
    await until(lambda: len(env.rec.held) == len(LANES), f"{holding} is held in both lanes")
    await handle.cancel()
    for lane in LANES:
        attempt = env.client.get_workflow_handle(attempt_workflow_id(req.run_id, "t1", lane, 1))
        if holding in FINISHED:  # not asked: it runs to its end, and the cancel waits
            await until(lambda a=attempt: cancel_handled(a), f"the {lane} attempt heard it")
        else:
            asked = f"the {lane} attempt asked to cancel {holding}"
            await until(lambda a=attempt: has_event(a, ASKED), asked)
        holds[lane].set()  # it ends as if no cancel had come
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    return req.run_id


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_a_provision_that_ends_after_the_cancel_starts_no_agent(env: Env) -> None:
    await _cancel_while_held(env, "provision_sandbox", infra_retries=2)
    await until(lambda: not env.rec.live, "both containers are removed")
    assert env.rec.agent_runs == []
    assert sorted(env.rec.torn_down) == sorted(env.rec.provisioned)


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_an_arm_whose_attempt_ends_after_the_cancel_starts_no_new_attempt(
    env: Env,
) -> None:
    """The cancel lands while the attempt removes its container: the attempt ends, on the
    record; its arm, cancelled too, must not start the retry its infra result asks for."""
    env.rec.classes = {f"t1/{lane}": ["infra_other", "completed"] for lane in LANES}
    await _cancel_while_held(env, "teardown_sandbox", infra_retries=2)
    assert sorted((r.lane, r.attempt) for r in env.rec.agent_runs) == [(lane, 1) for lane in LANES]


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_a_host_claimed_as_the_cancel_came_is_released(env: Env) -> None:
    await _cancel_while_held(env, "claim_host")
    await until(lambda: env.rec.claims == len(LANES), "both claims have ended")
    assert env.rec.reserved == set()
    assert env.rec.agent_runs == []
