"""Deterministic orchestration only: no I/O, clocks, randomness or threads."""

from workflows.agent_run import AgentRunWorkflow
from workflows.paired_task import PairedTaskWorkflow, attempt_workflow_id, pair_workflow_id
from workflows.suite_run import SuiteRunWorkflow, run_workflow_id

WORKFLOWS = (SuiteRunWorkflow, PairedTaskWorkflow, AgentRunWorkflow)
"""Every workflow a worker registers."""

__all__ = [
    "WORKFLOWS",
    "AgentRunWorkflow",
    "PairedTaskWorkflow",
    "SuiteRunWorkflow",
    "attempt_workflow_id",
    "pair_workflow_id",
    "run_workflow_id",
]
