"""Recorded histories must replay against today's workflow code (determinism)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from runtime.workflow_runner import workflow_runner
from workflows import WORKFLOWS

HISTORIES = Path(__file__).resolve().parent.parent / "histories"


@pytest.mark.parametrize("name", sorted(p.name for p in HISTORIES.glob("*.json")))
async def test_history_replays(name: str) -> None:
    history = WorkflowHistory.from_json(name, (HISTORIES / name).read_text())
    replayer = Replayer(
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),  # the production worker's sandbox
        data_converter=pydantic_data_converter,
    )
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


def test_every_workflow_and_its_paths_have_a_recorded_history() -> None:
    """One history per workflow type and path worth replaying (scripts/record_histories.py)."""
    assert {p.stem for p in HISTORIES.glob("*.json")} >= {
        "suite_run_first",  # a run's first segment: plan, approve, pairs, continue as new
        "suite_run_last",  # its last segment: the last pairs, the report
        "suite_run_cancelled",
        "paired_task",
        "paired_task_infra_retry",
        "paired_task_await_lease",  # a pair waiting for an account
        "agent_run",
        "agent_run_cancelled",
        "agent_run_host_failover",
        "account_pool",
        "account_pool_update_count",  # the pool continuing as new
        "sandbox_slots",  # the deployment's sandbox quota: takes, give-backs, a reap
        "suite_run_capped",  # a run that stops at its spend cap
        "run_spend",  # a capped run's book: pairs asked for, hosts' reports, closed
    }
