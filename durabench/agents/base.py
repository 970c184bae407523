"""The agent interface: what to copy in, what to run, how to read what it wrote; no I/O.

An adapter turns (task, lane, attempt, model, options) into commands for the sandbox.
Building commands touches nothing, so adapters are tested without Docker. The agent's
stdout is its transcript.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.task import TaskSpec
from durabench.models.verdict import TranscriptFormat
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
    """A host file or directory the agent needs in the sandbox."""

    host_path: Path
    dest: str


class AgentContext(BaseModel):
    """What an adapter may use to build its commands."""

    model_config = ConfigDict(frozen=True)

    task: TaskSpec
    """The task."""
    model: str
    """Requested model."""
    lane: str = "baseline"
    """Lane config name."""
    attempt: int = 1
    """Attempt number."""
    paths: SandboxPaths = SandboxPaths()
    """Paths inside the sandbox."""
    has_mcp_config: bool = False
    """Whether the lane placed an MCP config at ``paths.mcp_config``."""


class Agent(ABC):
    """An agent adapter, built with the run's agent options."""

    name: ClassVar[str]
    """Registry name."""
    needs_network: ClassVar[bool] = False
    """Whether the agent needs the network (a model API); off for oracle and nop."""
    uses_mcp: ClassVar[bool] = False
    """Whether the agent reads the MCP config: only then does it get the MCP secrets."""

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        self.options = dict(options or {})

    def check_task(self, task: TaskSpec) -> None:  # noqa: B027 - optional hook
        """Raise :class:`~durabench.errors.ConfigError` if the agent cannot run ``task``."""

    def uploads(self, ctx: AgentContext) -> list[Upload]:
        """Host files and directories to copy into the sandbox before the agent runs."""
        return []

    def mounts(self, ctx: AgentContext) -> dict[str, str]:
        """Host directories the sandbox mounts for the agent (host path to sandbox path)."""
        return {}

    def transcript_format(self, ctx: AgentContext) -> TranscriptFormat | None:
        """Dialect of the transcript the agent prints; ``None`` when it prints none."""
        return None

    @abstractmethod
    def run_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """The commands of the agent phase, in order. Pure: no I/O."""
