"""A pair started while its run is paused (or as the pause comes) honours the pause.

The run's pause signal may reach a pair that is not started yet and be lost; the pair's
input carries the run's control state, and the run re-sends it once the pair started.
"""

from __future__ import annotations

import uuid

import pytest

from durabench.models.agent import AgentSpec
from durabench.models.pair import PairInput
from durabench.models.run import TaskRef
from tests.workflows.harness import Env, until
from workflows import PairedTaskWorkflow, pair_workflow_id


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
