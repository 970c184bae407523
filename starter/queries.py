"""The run's and a pair's queries, asked by name: a client loads no workflow module for them.

``SuiteRunWorkflow`` answers ``progress`` and ``plan``; ``PairedTaskWorkflow`` answers
``progress``. Their modules import every activity (and through them Docker and HTTP
clients), which ``status`` and the live view never run: the names and the answers' models
are all a query needs.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio.client import Client, WorkflowHandle

from durabench.models.pair import PairProgress
from durabench.models.run import PlanSummary
from durabench.models.suite_run import ProgressOutput
from workflows import pair_workflow_id

__all__ = ["PAIR_QUERIES", "RUN_QUERIES", "pair_progress", "run_plan", "run_progress"]

RUN_QUERIES = {"progress": ProgressOutput, "plan": PlanSummary}
"""The run's queries asked here, with their answers' types (a test holds them to the workflow)."""
PAIR_QUERIES = {"progress": PairProgress}
"""A pair's queries asked here, with their answers' types."""


async def run_progress(handle: WorkflowHandle[Any, Any], within: timedelta) -> ProgressOutput:
    """The run's ``progress`` query (raises ``RPCError`` when nothing answers ``within``)."""
    progress: ProgressOutput = await handle.query(
        "progress", result_type=ProgressOutput, rpc_timeout=within
    )
    return progress


async def run_plan(handle: WorkflowHandle[Any, Any], within: timedelta) -> PlanSummary | None:
    """The run's ``plan`` query: ``None`` until the plan is made."""
    plan: PlanSummary | None = await handle.query(  # None travels as binary/null
        "plan", result_type=PlanSummary, rpc_timeout=within
    )
    return plan


async def pair_progress(
    client: Client, run_id: str, task_id: str, within: timedelta
) -> PairProgress:
    """A pair's ``progress`` query."""
    handle = client.get_workflow_handle(pair_workflow_id(run_id, task_id))
    progress: PairProgress = await handle.query(
        "progress", result_type=PairProgress, rpc_timeout=within
    )
    return progress
