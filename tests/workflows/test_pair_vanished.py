"""A pair that ends without telling the run (terminated, reset away) does not hang it.

The run notices: a pair it started closes under its eyes (a child-closed event); a pair
it carried across continue-as-new is looked up now and then. Either is recorded as ended
abnormally (done, excluded), and the run goes on to its report.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from activities import AccountActivities
from durabench.models.suite_run import RunOutcome
from durabench.settings.values import Settings
from starter.approve import approve_main
from tests.workflows.fakes import SLOW, Recorder
from tests.workflows.harness import Env, start_run, until
from workflows import WORKFLOWS, SuiteRunWorkflow, pair_workflow_id, run_workflow_id


async def _ended(env: Env, run_id: str) -> RunOutcome:
    """The run's outcome; before, it waited for the terminated pair forever."""
    handle = env.client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    await until(lambda: _closed(handle), "the run ended", tries=600)
    return await handle.result()


async def _closed(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await handle.describe()).close_time is not None


@pytest.mark.parametrize("env", [[SLOW, "t2"]], indirect=True)
async def test_a_terminated_pair_the_run_started_is_recorded_and_the_run_ends(env: Env) -> None:
    request, handle = await start_run(env, parallel=2)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: (SLOW, "baseline") in env.rec.live, "the slow pair's agent runs")
    pair = env.client.get_workflow_handle(pair_workflow_id(request.run_id, SLOW))
    await pair.terminate("an operator ended it by hand")
    outcome = await _ended(env, request.run_id)
    assert outcome.status == "completed"
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert (progress.done, progress.excluded, progress.running) == (2, 1, ())
    assert progress.ended_abnormally == (SLOW,)
    # Its attempts are cancelled by the pair's close policy: a cancel, then collect and
    # teardown, each a workflow task and an activity: slow on a loaded server.
    await until(lambda: not env.rec.live, "the terminated pair's sandboxes are torn down", 600)


async def test_a_terminated_pair_carried_across_continue_as_new_is_found(
    client: Client, tmp_path: Path
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=[SLOW, "t2", "t3"])
    accounts = AccountActivities(client, Settings(home=tmp_path, task_queue=queue))
    async with Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS),
        activities=[*rec.activities(), accounts.vanished_holders],
    ):
        env = Env(client, rec)
        request, handle = await start_run(env, parallel=2, pairs_per_run=2, pair_check_sec=1)
        first = (await handle.describe()).run_id
        await approve_main(request.run_id, "ann", client=client)
        await until(lambda: _moved_on(env, request.run_id, first), "the run continued as new")
        await until(lambda: (SLOW, "baseline") in rec.live, "the slow pair's agent runs")
        pair = client.get_workflow_handle(pair_workflow_id(request.run_id, SLOW))
        await pair.terminate("an operator ended it by hand")
        outcome = await _ended(env, request.run_id)
        latest = client.get_workflow_handle_for(SuiteRunWorkflow.run, handle.id)
        progress = await latest.query(SuiteRunWorkflow.progress)
    assert outcome.status == "completed"
    assert (progress.done, progress.excluded, progress.ended_abnormally) == (3, 1, (SLOW,))


async def _moved_on(env: Env, run_id: str, first: str) -> bool:
    desc = await env.client.get_workflow_handle(run_workflow_id(run_id)).describe()
    return desc.run_id != first
