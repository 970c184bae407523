"""Deterministic orchestration only: no I/O, clocks, randomness or threads."""

from workflows.account_pool import AccountPoolWorkflow, pool_workflow_id
from workflows.agent_run import AgentRunWorkflow
from workflows.paired_task import PairedTaskWorkflow, attempt_workflow_id, pair_workflow_id
from workflows.suite_run import SuiteRunWorkflow, run_workflow_id

WORKFLOWS = (SuiteRunWorkflow, PairedTaskWorkflow, AgentRunWorkflow, AccountPoolWorkflow)
"""Every workflow a worker registers."""

__all__ = [
    "WORKFLOWS",
    "AccountPoolWorkflow",
    "AgentRunWorkflow",
    "PairedTaskWorkflow",
    "SuiteRunWorkflow",
    "attempt_workflow_id",
    "pair_workflow_id",
    "pool_workflow_id",
    "run_workflow_id",
]
