"""Recorded histories must replay against today's workflow code (determinism)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows import WORKFLOWS

HISTORIES = Path(__file__).resolve().parent.parent / "histories"


@pytest.mark.parametrize("name", sorted(p.name for p in HISTORIES.glob("*.json")))
async def test_history_replays(name: str) -> None:
    history = WorkflowHistory.from_json(name, (HISTORIES / name).read_text())
    replayer = Replayer(workflows=list(WORKFLOWS), data_converter=pydantic_data_converter)
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


def test_every_workflow_and_the_retry_path_have_a_recorded_history() -> None:
    assert {p.name for p in HISTORIES.glob("*.json")} >= {
        "account_pool.json",
        "account_pool_update_count.json",
        "agent_run_cancelled_waits.json",
        "paired_task_busy_account.json",
        "paired_task_await_lease.json",
        "suite_run_refused.json",
        "suite_run_ui.json",
        "paired_task_ui.json",
        "agent_run_outcome.json",
    }
