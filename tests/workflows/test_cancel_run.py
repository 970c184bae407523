"""Cancelling a run ends every pair it started, whatever the run was doing at the time."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError, WorkflowHandle

from starter.approve import approve_main
from tests.workflows.fakes import SLOW
from tests.workflows.harness import Env, start_run, until
from workflows import attempt_workflow_id, run_workflow_id


@pytest.mark.parametrize("env", [[SLOW, "t2", "t3"]], indirect=True)
async def test_a_cancel_while_the_plan_is_read_cancels_the_pairs_in_flight(env: Env) -> None:
    """The cancel lands in ``plan_page``: it reaches the run as an activity's error."""
    env.rec.page_gate = asyncio.Event()  # the run's second segment reads page 2 and waits
    request, handle = await start_run(env, parallel=2, pairs_per_run=2)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: "plan_page@2" in env.rec.calls, "the run reads the plan's second page")
    await until(lambda: (SLOW, "baseline") in env.rec.live, "the slow pair's agent runs")
    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    await until(lambda: not env.rec.live, "every sandbox of the run is torn down")
    await _record(env, request.run_id)
    assert sorted(env.rec.torn_down) == sorted(env.rec.provisioned)
    assert "t3" not in {t for t, _ in env.rec.provisioned}


async def _record(env: Env, run_id: str) -> None:
    """With DURABENCH_RECORD_HISTORIES=DIR, keep the cancelled run and attempt's histories."""
    record = os.environ.get("DURABENCH_RECORD_HISTORIES")  # how tests/histories got them
    if not record:
        return
    ids = {
        "suite_run_cancelled": run_workflow_id(run_id),
        "agent_run_cancelled": attempt_workflow_id(run_id, SLOW, "baseline", 1),
    }
    for name, workflow_id in ids.items():
        handle = env.client.get_workflow_handle(workflow_id)
        await until(lambda h=handle: _closed(h), f"{workflow_id} closed")
        text = (await handle.fetch_history()).to_json()
        Path(record, f"{name}.json").write_text(text)


async def _closed(handle: WorkflowHandle[Any, Any]) -> bool:
    return (await handle.describe()).close_time is not None
