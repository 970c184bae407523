"""``starter run --yes`` approves the plan whatever the mode, detached too."""

from __future__ import annotations

import uuid
from pathlib import Path

from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from starter.run import main as run_main
from tests.workflows.harness import Env
from workflows import SuiteRunWorkflow, run_workflow_id


async def test_a_detached_run_with_yes_is_approved_once_planned(
    env: Env, tmp_path: Path, temporal_address: str
) -> None:
    """Detached, nobody is there to approve later: the approval travels with the request."""
    settings = Settings(
        home=tmp_path / "home", temporal_address=temporal_address, task_queue=env.rec.queue
    )
    request = RunRequest(
        run_id=f"r-{uuid.uuid4().hex[:8]}",
        suite="s",
        infra_backoff_sec=0.1,
        approval_timeout_sec=20,  # before: the run waited for an approval nobody sent
    )
    started = await run_main(request, yes=True, detach=True, client=env.client, settings=settings)
    assert started is None  # detached: it returned at once
    handle = env.client.get_workflow_handle_for(
        SuiteRunWorkflow.run, run_workflow_id(request.run_id)
    )
    outcome = await handle.result()
    assert (outcome.status, outcome.reason) == ("completed", "")
    progress = await handle.query(SuiteRunWorkflow.progress)
    assert progress.approved_by is not None and progress.approved_by.endswith("(--yes)")
    assert progress.done == len(env.rec.task_ids)
