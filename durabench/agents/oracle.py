"""The oracle agent: runs the task's reference ``solution/solve.sh``.

It proves a task is solvable and its verifier scores a correct fix 1.0, and it is the
agent of the end-to-end tests (no model involved).
"""

from __future__ import annotations

from pathlib import Path

from durabench.agents.base import Agent, AgentContext, ExecInput, Upload
from durabench.agents.registry import agent
from durabench.errors import ConfigError
from durabench.models.task import TaskSpec

__all__ = ["OracleAgent"]


@agent("oracle")
class OracleAgent(Agent):
    """Applies the reference solution."""

    def check_task(self, task: TaskSpec) -> None:
        """The oracle needs ``solution/solve.sh``."""
        if not task.has_solution:
            raise ConfigError(
                f"task {task.task_id} has no solution/solve.sh, which the oracle agent runs; "
                "add one or choose another --agent"
            )

    def uploads(self, ctx: AgentContext) -> list[Upload]:
        """The task's ``solution/`` directory."""
        return [Upload(Path(ctx.task.task_dir) / "solution", str(ctx.paths.solution))]

    def run_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """``bash solve.sh`` in the workspace."""
        return [ExecInput(command=f"bash {ctx.paths.solution}/solve.sh")]
