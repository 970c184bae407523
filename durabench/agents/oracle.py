"""The oracle agent: runs the task's reference ``solution/solve.sh``.

It proves a task is solvable and its verifier scores a correct fix 1.0, and it is the
agent of the end-to-end tests (no model involved). It runs as the image's user (root,
mostly), as Harbor's does; ``--agent-opt user=agent`` runs it as the unprivileged user
real agents run as, which is how a solution is tried against the sandbox's defences.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from durabench.agents.agent_registry import agent
from durabench.agents.base import Agent, AgentContext, ExecInput, Upload
from durabench.agents.user import AGENT_USER, add_agent_user
from durabench.errors import ConfigError
from durabench.models.task import TaskSpec

__all__ = ["OracleAgent"]


@agent("oracle")
class OracleAgent(Agent):
    """Applies the reference solution."""

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        unknown = sorted(set(self.options) - {"user"})
        if unknown or self.options.get("user", AGENT_USER) != AGENT_USER:
            raise ConfigError(
                f"the oracle takes only --agent-opt user={AGENT_USER} (run the solution as "
                f"the unprivileged agent user); drop {', '.join(unknown) or 'that user'}"
            )
        self.user = self.options.get("user")

    def setup_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """With ``user=agent``: add that user and give it the workspace."""
        return [add_agent_user(ctx)] if self.user else []

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
        return [ExecInput(command=f"bash {ctx.paths.solution}/solve.sh", user=self.user)]
