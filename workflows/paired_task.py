"""PairedTaskWorkflow: both lanes of one task, side by side.

Both arms start at once and the pair completes when both are terminal, so a baseline
and its MCP counterpart always run under the same conditions.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durabench.models import AttemptRef, PairInput, PairResult
    from workflows.agent_run import AgentRunWorkflow

__all__ = ["PairedTaskWorkflow", "attempt_workflow_id", "pair_workflow_id"]


def pair_workflow_id(run_id: str, task_id: str) -> str:
    """``run/<run_id>/task/<task_id>``."""
    return f"run/{run_id}/task/{task_id}"


def attempt_workflow_id(run_id: str, task_id: str, lane: str, attempt: int) -> str:
    """``run/<run_id>/task/<task_id>/<lane>/<attempt>``."""
    return f"{pair_workflow_id(run_id, task_id)}/{lane}/{attempt}"


@workflow.defn
class PairedTaskWorkflow:
    """One task, every lane of the plan; id ``run/<run_id>/task/<task_id>``."""

    @workflow.run
    async def run(self, pair: PairInput) -> PairResult:
        """Start one attempt per lane; wait for all."""
        refs = [
            AttemptRef(
                run_id=pair.run_id, task=pair.task, lane=lane, agent=pair.agent, model=pair.model
            )
            for lane in pair.lanes
        ]
        results = await asyncio.gather(
            *(
                workflow.execute_child_workflow(
                    AgentRunWorkflow.run,
                    ref,
                    id=attempt_workflow_id(ref.run_id, ref.task.task_id, ref.lane, ref.attempt),
                    static_summary=f"{ref.task.task_id} · {ref.lane} · attempt {ref.attempt}",
                )
                for ref in refs
            )
        )
        return PairResult(task_id=pair.task.task_id, attempts=tuple(results))
