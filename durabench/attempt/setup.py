"""What an attempt is made of, resolved from its reference: task, lane, agent, context.

Every phase resolves the same parts from the same :class:`~durabench.models.AttemptRef`
(on whichever worker runs it), so a retried or moved phase sees what the first one saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from durabench.agents import Agent, AgentContext, get_agent
from durabench.configs import get_config
from durabench.models.attempt import AttemptRef
from durabench.models.config import LaneConfig
from durabench.models.task import TaskSpec
from durabench.settings.paths import SandboxPaths
from durabench.tasks import load_task

__all__ = ["AttemptSetup"]


class AttemptSetup(NamedTuple):
    """The parts of one attempt."""

    task: TaskSpec
    config: LaneConfig
    agent: Agent
    ctx: AgentContext

    @classmethod
    def of(
        cls, ref: AttemptRef, environ: Mapping[str, str], paths: SandboxPaths | None = None
    ) -> AttemptSetup:
        """Resolve ``ref``'s task, lane config and agent.

        Raises:
            ConfigError: the task, lane or agent is unknown or invalid here.
        """
        task = load_task(ref.task.task_dir)
        config = get_config(ref.lane)
        mcp = config.mcp
        ctx = AgentContext(
            task=task,
            model=ref.agent.model,
            lane=ref.lane,
            attempt=ref.attempt,
            paths=paths or SandboxPaths(),
            has_mcp_config=mcp is not None,
            mcp=mcp,
            mcp_url=environ.get(mcp.url_env, "") if mcp and mcp.url_env else "",
        )
        return cls(task, config, get_agent(ref.agent.name, ref.agent.options), ctx)
