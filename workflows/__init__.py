"""Deterministic orchestration only: no I/O, clocks, randomness or threads.

The names below are loaded on first use (PEP 562): importing one light submodule, such as
``workflows.search_attributes`` for a client, must not load every workflow module and,
through them, every activity with its Docker, HTTP and gateway code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workflows.account_pool import AccountPoolWorkflow, pool_workflow_id
    from workflows.agent_run import AgentRunWorkflow
    from workflows.ids import attempt_workflow_id, pair_workflow_id, run_workflow_id
    from workflows.paired_task import PairedTaskWorkflow
    from workflows.run_spend import RunSpendWorkflow
    from workflows.sandbox_slots import SandboxSlotsWorkflow
    from workflows.suite_run import SuiteRunWorkflow

    WORKFLOWS: tuple[type, ...]

__all__ = [
    "WORKFLOWS",
    "AccountPoolWorkflow",
    "AgentRunWorkflow",
    "PairedTaskWorkflow",
    "RunSpendWorkflow",
    "SandboxSlotsWorkflow",
    "SuiteRunWorkflow",
    "attempt_workflow_id",
    "pair_workflow_id",
    "pool_workflow_id",
    "run_workflow_id",
]

_HOMES = {
    "AccountPoolWorkflow": "workflows.account_pool",
    "pool_workflow_id": "workflows.account_pool",
    "AgentRunWorkflow": "workflows.agent_run",
    "PairedTaskWorkflow": "workflows.paired_task",
    "SandboxSlotsWorkflow": "workflows.sandbox_slots",
    "RunSpendWorkflow": "workflows.run_spend",
    "attempt_workflow_id": "workflows.ids",
    "pair_workflow_id": "workflows.ids",
    "SuiteRunWorkflow": "workflows.suite_run",
    "run_workflow_id": "workflows.ids",
}
"""Where each public name lives."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module now.

    ``WORKFLOWS`` is every workflow a worker registers.
    """
    if name == "WORKFLOWS":
        return tuple(
            __getattr__(n)
            for n in (
                "SuiteRunWorkflow",
                "PairedTaskWorkflow",
                "AgentRunWorkflow",
                "AccountPoolWorkflow",
                "SandboxSlotsWorkflow",
                "RunSpendWorkflow",
            )
        )
    if name not in _HOMES:
        raise AttributeError(f"module 'workflows' has no attribute {name!r}")
    # ``__import__``, not importlib: inside the workflow sandbox it is the sandbox's importer.
    return getattr(__import__(_HOMES[name], fromlist=[name]), name)
