"""A session that ran is paid for once and keeps its verdict, however its harness fares.

Worker takeovers (``WorkerLost``) and transient failures of the harness's own steps after
the session began spend time, never a count; a cancel that lands once the agent ran lets
the tests and the close-out finish, and the real verdict is recorded.
"""

from __future__ import annotations

import asyncio

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError

from starter.approve import approve_main
from tests.workflows.harness import Env, cancel_handled, has_event, start_run, until
from workflows import attempt_workflow_id

LANES = ("baseline", "sourcegraph_full")
ASKED = EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED
RUN_CANCEL = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED


def _held(env: Env, step: str) -> dict[str, asyncio.Event]:
    """Hold ``step`` in both lanes (it waits without heartbeating); the events that end it."""
    holds = {lane: asyncio.Event() for lane in LANES}
    for lane, event in holds.items():
        env.rec.holds[f"{step}/t1/{lane}"] = event
    return holds


def _verdicts(env: Env) -> list[tuple[str, int, str, float | None]]:
    return sorted((a.lane, a.attempt, a.exit_class, a.reward) for a in env.rec.attempts)


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
@pytest.mark.parametrize("step", ["run_agent", "verify"])
async def test_eight_takeovers_in_one_step_after_the_launch_pay_once(env: Env, step: str) -> None:
    """Eight failures (more than any count the policies had: 5 and 3) in one lane."""
    env.rec.failures[f"{step}/t1/baseline"] = 8
    request, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(request.run_id, "ann", client=env.client)
    assert (await handle.result()).status == "completed"
    assert not +env.rec.failures  # all eight happened
    assert sorted(env.rec.sessions) == [("t1", "baseline", 1), ("t1", "sourcegraph_full", 1)]
    assert _verdicts(env) == [
        ("baseline", 1, "completed", 1.0),
        ("sourcegraph_full", 1, "completed", 1.0),
    ]


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
@pytest.mark.parametrize("step", ["run_agent", "verify", "finish_sandbox"])
async def test_a_step_that_gives_up_on_a_session_that_began_is_not_paid_again(
    env: Env, step: str
) -> None:
    """The harness fails for good after the launch (a non-retryable failure stands for a
    deadline passed): the attempt is excluded, and its session is not bought again."""
    env.rec.broken.add(f"{'classify' if step == 'finish_sandbox' else step}/t1/baseline")
    request, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(request.run_id, "ann", client=env.client)
    assert (await handle.result()).status == "completed"
    assert sorted(env.rec.sessions) == [("t1", "baseline", 1), ("t1", "sourcegraph_full", 1)]
    (baseline,) = [a for a in env.rec.attempts if a.lane == "baseline"]
    assert (baseline.exit_class, baseline.session_began) == ("infra_other", True)
    await until(lambda: not env.rec.live, "both containers are removed")


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_a_session_that_died_unrecorded_is_run_again(env: Env) -> None:
    """``AgentLost`` proves the session ended without a verdict: the pair runs it again."""
    env.rec.lost.add("t1/baseline/1")
    request, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(request.run_id, "ann", client=env.client)
    assert (await handle.result()).status == "completed"
    assert sorted(env.rec.sessions) == [
        ("t1", "baseline", 1),
        ("t1", "baseline", 2),
        ("t1", "sourcegraph_full", 1),
    ]
    assert _verdicts(env) == [
        ("baseline", 1, "infra_other", None),
        ("baseline", 2, "completed", 1.0),
        ("sourcegraph_full", 1, "completed", 1.0),
    ]


async def _cancel_during(env: Env, step: str) -> None:
    """Run one task, cancel the run while ``step`` runs in both lanes (heartbeating, so
    the ask reaches it), then let the step end; return once the run has ended."""
    gates = {lane: asyncio.Event() for lane in LANES}
    for lane, event in gates.items():
        env.rec.gates[f"{step}/t1/{lane}"] = event
    req, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(req.run_id, "ann", client=env.client)
    await until(lambda: len(env.rec.gated) == len(LANES), f"{step} runs in both lanes")
    await handle.cancel()
    for lane in LANES:
        attempt = env.client.get_workflow_handle(attempt_workflow_id(req.run_id, "t1", lane, 1))
        await until(lambda a=attempt: cancel_handled(a), f"the {lane} attempt heard the cancel")
        if await has_event(attempt, ASKED):  # it asked the step to stop: wait until it did
            key = f"{step}/t1/{lane}"
            await until(lambda k=key: k in env.rec.cancelled, f"{step} of {lane} is cancelled")
    for event in gates.values():
        event.set()
    with pytest.raises(WorkflowFailureError):
        await handle.result()


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
@pytest.mark.parametrize("step", ["verify", "finish_sandbox"])
async def test_a_cancel_while_a_session_that_ran_closes_out_keeps_its_verdict(
    env: Env, step: str
) -> None:
    await _cancel_during(env, step)
    assert _verdicts(env) == [
        ("baseline", 1, "completed", 1.0),
        ("sourcegraph_full", 1, "completed", 1.0),
    ]
    assert sorted(env.rec.sessions) == [("t1", "baseline", 1), ("t1", "sourcegraph_full", 1)]
    await until(lambda: not env.rec.live, "both containers are removed")


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_a_session_that_ends_as_the_cancel_comes_is_verified_and_kept(env: Env) -> None:
    """The agent's activity does not hear the cancel (between heartbeats) and its session
    ends: the session is paid for, so its tests run and its verdict is recorded."""
    holds = _held(env, "run_agent")
    req, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(req.run_id, "ann", client=env.client)
    await until(lambda: len(env.rec.held) == len(LANES), "both sessions run")
    await handle.cancel()
    for lane in LANES:
        attempt = env.client.get_workflow_handle(attempt_workflow_id(req.run_id, "t1", lane, 1))
        await until(lambda a=attempt: has_event(a, ASKED), f"the {lane} attempt asked its agent")
        holds[lane].set()  # the session ends as if no cancel had come
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    assert _verdicts(env) == [
        ("baseline", 1, "completed", 1.0),
        ("sourcegraph_full", 1, "completed", 1.0),
    ]
    assert env.rec.calls.count("verify") == len(LANES)
    await until(lambda: not env.rec.live, "both containers are removed")


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_no_session_launches_once_the_run_s_cancel_is_recorded(env: Env) -> None:
    """The agent phases began, and are about to launch, when the run is cancelled: the
    cancel has not travelled down to the attempts (run, pair, attempt, then a heartbeat),
    but it is recorded on the run, and that is what a launch asks."""
    holds = _held(env, "launch")
    req, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(req.run_id, "ann", client=env.client)
    await until(lambda: len(env.rec.held) == len(LANES), "both agent phases are about to launch")
    await handle.cancel()
    await until(lambda: has_event(handle, RUN_CANCEL), "the run's cancel is recorded")
    for event in holds.values():
        event.set()  # neither phase has heard its own cancel (it beats no heartbeat here)
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    assert env.rec.sessions == []
    await until(lambda: not env.rec.live, "both containers are removed")
