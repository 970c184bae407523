"""The nop agent: changes nothing.

A task's verifier must not score an untouched workspace as solved; running ``nop``
shows it, and benchmarks use it as the instant agent.
"""

from __future__ import annotations

from durabench.agents.agent_registry import agent
from durabench.agents.base import Agent, AgentContext, ExecInput

__all__ = ["NopAgent"]


@agent("nop")
class NopAgent(Agent):
    """Does nothing and exits 0."""

    working_set_mb = 0

    def run_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """A single ``true``."""
        return [ExecInput(command="true")]
