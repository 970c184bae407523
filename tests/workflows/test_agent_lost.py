"""An agent phase that finds its session dead ends the attempt ``infra_other`` at once.

``run_agent`` raises :class:`AgentLost` when the step it re-attaches to died unrecorded
(its container restarted, its process killed): not retried (another try finds it just as
dead), recorded with the reason, and the pair runs the lane again (issue 19).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from durabench.errors import AgentLost
from durabench.models.attempt import AgentRunOutput, AttemptRef
from starter.approve import approve_main
from tests.workflows.fakes import Recorder
from tests.workflows.harness import Env, start_run
from workflows import WORKFLOWS


async def test_a_lost_session_ends_its_attempt_as_infra_and_the_pair_runs_it_again(
    client: Client,
) -> None:
    rec = Recorder(queue=f"wf-{uuid.uuid4().hex[:8]}", task_ids=["t1"])
    tries: list[tuple[str, int]] = []

    @activity.defn(name="run_agent")
    async def run_agent(ref: AttemptRef) -> AgentRunOutput:
        tries.append((ref.lane, ref.attempt))
        if (ref.lane, ref.attempt) == ("baseline", 1):
            raise AgentLost("agent step 0 in c no longer runs, without recording its end")
        return AgentRunOutput(exit_code=0, timed_out=False, files_changed=1)

    activities = [a for a in rec.activities() if a.__name__ != "run_agent"]
    async with Worker(
        client,
        task_queue=rec.queue,
        workflows=list(WORKFLOWS),
        activities=[*activities, run_agent],
        max_heartbeat_throttle_interval=timedelta(seconds=1),
    ):
        request, handle = await start_run(Env(client, rec), parallel=1)
        await approve_main(request.run_id, "ann", client=client)
        outcome = await handle.result()
    assert outcome.status == "completed"
    assert sorted(tries) == [("baseline", 1), ("baseline", 2), ("sourcegraph_full", 1)]
    lost = next(a for a in rec.attempts if (a.lane, a.attempt) == ("baseline", 1))
    assert lost.exit_class == "infra_other"
    assert lost.reason.startswith("AgentLost: agent step 0") and "no longer runs" in lost.reason
    again = next(a for a in rec.attempts if (a.lane, a.attempt) == ("baseline", 2))
    assert again.exit_class == "completed"
