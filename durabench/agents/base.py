"""The agent interface: what to copy in and what to run; no I/O.

An adapter turns (task, lane, model) into commands for the sandbox. Building commands
touches nothing, so adapters are tested without Docker.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.task import TaskSpec
from durabench.paths import SandboxPaths

__all__ = ["Agent", "AgentContext", "ExecInput", "Upload"]


class ExecInput(BaseModel):
    """One shell command of the agent phase."""

    model_config = ConfigDict(frozen=True)

    command: str
    """Shell command line, run with ``sh -c`` in the workspace."""
    user: str | None = None
    """User to run as; ``None`` is the image's default."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment (never secrets: those are added by the activity)."""


class Upload(NamedTuple):
    """A host directory the agent needs in the sandbox."""

    host_dir: Path
    dest: str


class AgentContext(BaseModel):
    """What an adapter may use to build its commands."""

    model_config = ConfigDict(frozen=True)

    task: TaskSpec
    """The task."""
    model: str
    """Requested model."""
    paths: SandboxPaths = SandboxPaths()
    """Paths inside the sandbox."""
    has_mcp_config: bool = False
    """Whether the lane placed an MCP config at ``paths.mcp_config``."""


class Agent(ABC):
    """An agent adapter."""

    name: ClassVar[str]
    """Registry name."""
    needs_network: ClassVar[bool] = False
    """Whether the agent needs the network (a model API); off for oracle and nop."""

    def check_task(self, task: TaskSpec) -> None:  # noqa: B027 - optional hook
        """Raise :class:`~durabench.errors.ConfigError` if the agent cannot run ``task``."""

    def uploads(self, task: TaskSpec, paths: SandboxPaths) -> list[Upload]:
        """Host directories to copy into the sandbox before the agent runs."""
        return []

    @abstractmethod
    def run_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """The commands of the agent phase, in order. Pure: no I/O."""
