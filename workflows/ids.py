"""Workflow ids: what a client needs to find a run, a pair or an attempt, and nothing else.

Kept apart from the workflow modules, which import every activity (for typed method
references) and through them Docker, httpx and the gateway: a client command that only
names a workflow imports this module alone.
"""

from __future__ import annotations

__all__ = ["attempt_workflow_id", "pair_workflow_id", "run_workflow_id"]


def run_workflow_id(run_id: str) -> str:
    """``run/<run_id>``."""
    return f"run/{run_id}"


def pair_workflow_id(run_id: str, task_id: str) -> str:
    """``run/<run_id>/task/<task_id>``."""
    return f"{run_workflow_id(run_id)}/task/{task_id}"


def attempt_workflow_id(run_id: str, task_id: str, lane: str, attempt: int) -> str:
    """``run/<run_id>/task/<task_id>/<lane>/<attempt>``."""
    return f"{pair_workflow_id(run_id, task_id)}/{lane}/{attempt}"
