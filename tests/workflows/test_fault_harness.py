"""Pay once, whatever happens: every activity boundary of a paired run x every fault.

Named scenarios find the defects someone imagined; this enumerates them. A one-task
paired run (replay-like fakes, the real workflows on the session's dev server) meets one
fault at one step of both lanes, and then the promises are checked as invariants:

- each lane's agent session is launched at most once (no fault here proves a session
  over, so none may be bought twice);
- every session that ran keeps a verdict: its class and reward, or, where the fault left
  the harness unable to judge it, ``infra_other`` marked ``session_began`` (excluded,
  never run again);
- after the run's cancel is recorded, no session launches;
- the run ends (completed, cancelled, or failed saying why) within a bound;
- no container is left and no host slot stays claimed.

The faults, as the workflows meet them:

- ``takeover``: the step fails eight times as a worker's successor fails a dead worker's
  activity (``WorkerLost``, retried at once): a kill -9 of the worker at that boundary,
  eight times over;
- ``gives up``: the step fails in a way no retry fixes, which is also how a step looks to
  its workflow once its retry policy has given up;
- ``cancel while running``: the run is cancelled while the step runs and heartbeats (the
  ask reaches it);
- ``cancel as it ends``: the run is cancelled while the step runs between heartbeats; it
  ends as if no cancel had come (a step completed whose completion the workflow has not
  yet seen).

Kills of real processes (the worker, the server, dockerd, a host) are in
``tests/integration`` (``test_resume``, ``test_server_restart``, ``test_chaos``,
``test_two_workers``). ``scripts/fault_table.py`` runs this module and writes its table
into docs/durability.md.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError

from durabench.models.results import AttemptResult
from starter.approve import approve_main
from tests.workflows.harness import Env, RunHandle, cancel_handled, has_event, start_run, until
from workflows import PairedTaskWorkflow, attempt_workflow_id, pair_workflow_id

LANES = ("baseline", "sourcegraph_full")
TABLE_ENV = "DURABENCH_FAULT_TABLE"
"""When set, each case appends its row (step, fault, outcome) to this JSON-lines file."""
ENDS_WITHIN = 120.0
"""Seconds a run may take to end after its fault: a hang check, not a timing assertion."""
ASKED = EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED


@dataclass(frozen=True)
class Case:
    step: str
    """The activity (``classify``: ``finish_sandbox``'s judging part)."""
    fault: str

    @property
    def id(self) -> str:
        return f"{self.step}-{self.fault.replace(' ', '-')}"


FAULTS = {
    "claim_host": ("takeover", "gives up", "cancel as it ends"),
    "provision_sandbox": ("takeover", "gives up", "cancel while running", "cancel as it ends"),
    "run_agent": ("takeover", "gives up", "cancel while running", "cancel as it ends"),
    "verify": ("takeover", "gives up", "cancel while running"),
    "classify": ("takeover", "gives up"),
    "finish_sandbox": ("cancel while running",),
    "teardown_sandbox": ("cancel as it ends",),
    "record_attempt": ("takeover", "gives up"),
    "write_report": ("takeover",),
}
"""Each step with the faults it can meet here (a hold needs a step that waits without
heartbeating; ``record_attempt`` is a local activity, which a cancel does not reach)."""
CASES = [Case(step, fault) for step, faults in FAULTS.items() for fault in faults]

NOT_FAULTED_HERE = {
    "plan_run": "before approval: nothing is bought yet; a refusal fails the run saying why",
    "plan_page": "before approval, as plan_run",
    "record_run": "bookkeeping of a run's plan and approval, before any session",
    "lease_account": "asks the pool workflow; a retried lease of the same id is the same "
    "lease (Pool.grant); the pool's own faults: test_account_pool.py",
    "await_lease": "waits on the pool workflow, as lease_account",
    "release_account": "a release of a lease no longer held is a no-op (Pool.release)",
    "vanished_holders": "the pool's reaping of holders that died: test_account_pool.py",
    "await_pairs": "the run's watch of its pairs: test_pair_watch.py fails it past its retries",
    "start_pairs": "an update of the spend book keyed by the pairs it asks for, safe to "
    "retry: test_spend_cap_run.py",
    "evaluate_attempt": "a grading service's, after the session's verdict is recorded",
    "score_run": "a grading service's, after every session",
}
"""Activities the workflows schedule that this harness does not fault, and why: each is
either before any session is bought or an idempotent ask of a workflow tested elsewhere."""


def _inject(env: Env, case: Case) -> dict[str, asyncio.Event]:
    """Arm the fault in both lanes; the events a cancel case releases, per lane."""
    keys = {lane: f"{case.step}/t1/{lane}" for lane in LANES}
    if case.step == "write_report":
        keys = {"run": "write_report/run/report"}
    if case.fault == "takeover":
        for key in keys.values():
            env.rec.failures[key] = 8
    elif case.fault == "gives up":
        env.rec.broken.update(keys.values())
    else:
        where = env.rec.gates if case.fault == "cancel while running" else env.rec.holds
        events = {lane: asyncio.Event() for lane in keys}
        for lane, key in keys.items():
            where[key] = events[lane]
        return events
    return {}


async def _cancel_at(env: Env, case: Case, handle: RunHandle, run_id: str, events: dict) -> int:
    """Cancel the run once the step waits in both lanes; release it. Sessions by then."""
    waiting = env.rec.gated if case.fault == "cancel while running" else env.rec.held
    await until(lambda: len(waiting) == len(LANES), f"{case.step} waits in both lanes")
    await handle.cancel()
    launched = len(env.rec.sessions)
    for lane in LANES:
        attempt = env.client.get_workflow_handle(attempt_workflow_id(run_id, "t1", lane, 1))
        await until(lambda a=attempt: cancel_handled(a), f"the {lane} attempt heard the cancel")
        if case.fault == "cancel while running" and await has_event(attempt, ASKED):
            key = f"{case.step}/t1/{lane}"  # the step was asked to stop: let it hear that
            await until(lambda k=key: k in env.rec.cancelled, f"{key} stopped")
        elif case.fault == "cancel as it ends" and case.step not in ("teardown_sandbox",):
            await until(lambda a=attempt: has_event(a, ASKED), f"the {lane} step was asked")
    for event in events.values():
        event.set()
    return launched


async def _run(env: Env, case: Case) -> tuple[str, str, int | None]:
    """Run the case: its run id, the run's end ("completed", "cancelled", "failed: ...")
    and the number of sessions launched when the cancel was sent (``None``: no cancel)."""
    events = _inject(env, case)
    request, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(request.run_id, "ann", client=env.client)
    launched = None
    if case.fault.startswith("cancel"):
        launched = await _cancel_at(env, case, handle, request.run_id, events)
    try:
        outcome = await asyncio.wait_for(handle.result(), ENDS_WITHIN)
        end = outcome.status
    except WorkflowFailureError as err:
        status = (await handle.describe()).status
        end = "cancelled" if status == WorkflowExecutionStatus.CANCELED else f"failed: {err.cause}"
    return request.run_id, end, launched


async def _kept(env: Env, run_id: str) -> list[AttemptResult]:
    """Every attempt's verdict: ``result.json``, else the pair's result where writing it
    gave up (the results store down for good keeps it in the pair's history)."""
    recorded = list(env.rec.attempts)
    pair = env.client.get_workflow_handle_for(
        PairedTaskWorkflow.run, pair_workflow_id(run_id, "t1")
    )
    if (await pair.describe()).status == WorkflowExecutionStatus.COMPLETED:
        on_disk = {(a.lane, a.attempt) for a in recorded}
        recorded += [
            a for a in (await pair.result()).attempts if (a.lane, a.attempt) not in on_disk
        ]
    return recorded


def _lane_outcome(sessions: int, last: AttemptResult | None, *, on_disk: bool) -> str:
    """What a lane came to, in words, for the table."""
    said = f"{sessions} session{'' if sessions == 1 else 's'}, "
    if last is None:
        return said + "no result (cancelled)"
    said += last.exit_class + (" (session_began)" if last.session_began else "")
    return said + ("" if on_disk else ", kept in the pair's history")


async def _check(env: Env, run_id: str, end: str, launched_at_cancel: int | None) -> dict[str, str]:
    """Assert the invariants; what each lane came to, for the table."""
    per_lane: dict[str, str] = {}
    kept = await _kept(env, run_id)
    for lane in LANES:
        sessions = [s for s in env.rec.sessions if s[1] == lane]
        assert len(sessions) <= 1, f"{lane}: a session bought twice: {sessions}"
        results = {a.attempt: a for a in kept if a.lane == lane}
        for _, _, attempt in {s for s in env.rec.sessions_ended if s[1] == lane}:
            result = results.get(attempt)
            assert result is not None, f"{lane}: attempt {attempt} lost its verdict ({end})"
            judged = (result.exit_class, result.reward) == ("completed", 1.0)
            unjudged = result.exit_class == "infra_other" and result.session_began
            assert judged or unjudged, f"{lane}: the verdict of a session that ran: {result}"
        last = results[max(results)] if results else None
        per_lane[lane] = _lane_outcome(len(sessions), last, on_disk=last in env.rec.attempts)
    if launched_at_cancel is not None:
        assert len(env.rec.sessions) == launched_at_cancel, "a session launched after the cancel"
    return per_lane


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_every_fault_at_every_step_keeps_the_promises(env: Env, case: Case) -> None:
    run_id, end, launched_at_cancel = await _run(env, case)
    per_lane = await _check(env, run_id, end, launched_at_cancel)
    await until(lambda: not env.rec.live, "every container is removed")
    await until(lambda: not env.rec.reserved, "every host slot is released")
    if case.fault in ("takeover",):
        assert not +env.rec.failures, "every injected failure happened"
    table = os.environ.get(TABLE_ENV)
    if table:
        row = {"step": case.step, "fault": case.fault, "run": end.split(":")[0], **per_lane}
        with Path(table).open("a") as f:
            f.write(json.dumps(row) + "\n")


def _scheduled_activities() -> set[str]:
    """Every ``<Group>Activities.<name>`` the workflows' code refers to: what they schedule."""
    found: set[str] = set()
    for source in (Path(__file__).parents[2] / "workflows").glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id.endswith("Activities")
            ):
                found.add(node.attr)
    return found


def test_every_activity_the_workflows_schedule_meets_the_faults_or_says_why() -> None:
    """A new activity boundary is faulted here, or named with the reason it need not be."""
    faulted = set(FAULTS) - {"classify"}  # finish_sandbox's judging part
    scheduled = _scheduled_activities()
    assert scheduled, "no activity found: the walk no longer matches the workflows' code"
    assert scheduled - faulted - set(NOT_FAULTED_HERE) == set()
    assert set(NOT_FAULTED_HERE) <= scheduled, "a reason kept for an activity now gone"
    assert not faulted & set(NOT_FAULTED_HERE)
