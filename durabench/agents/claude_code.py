"""Claude Code, headless: ``claude --print --output-format stream-json``.

The MCP lane points it at the lane's ``mcp.json`` (``--mcp-config``), which names the
endpoint and token as ``${VAR}``: Claude Code expands them from the environment the
activity hands it. The baseline lane gets no ``--mcp-config`` at all.
"""

from __future__ import annotations

import shlex
from typing import ClassVar

from durabench.agents.agent_registry import agent
from durabench.agents.base import AgentContext
from durabench.agents.cli import CliAgent
from durabench.models.verdict import TranscriptFormat

__all__ = ["ClaudeCodeAgent"]

MAX_OUTPUT_TOKENS = "64000"
"""``CLAUDE_CODE_MAX_OUTPUT_TOKENS``: high, so long edits are not cut short by a default."""
SMALL_MODEL = "claude-haiku-4-5"
"""The model Claude Code uses for its background calls (titles, summaries, its Explore
subagent) whatever ``--model`` says: the default of 2.1.332 (its ``haiku`` tier), pinned
through its own variables so another CLI version asks for the same one."""


@agent("claude-code")
class ClaudeCodeAgent(CliAgent):
    """Anthropic's Claude Code CLI."""

    package = "@anthropic-ai/claude-code"
    version = "2.1.332"
    binary = "claude"
    secret_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
    model_api = "anthropic"
    base_url_env = "ANTHROPIC_BASE_URL"
    auxiliary_models: ClassVar[tuple[str, ...]] = (SMALL_MODEL,)
    extra_options = frozenset({"max_output_tokens"})

    def transcript_format(self, ctx: AgentContext) -> TranscriptFormat:
        """Claude Code's stream-json."""
        return "claude-code"

    def env(self, ctx: AgentContext) -> dict[str, str]:
        """A high output-token cap; the small model pinned; no auto-update in the sandbox."""
        return {
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": self.options.get(
                "max_output_tokens", MAX_OUTPUT_TOKENS
            ),
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": SMALL_MODEL,
            "ANTHROPIC_SMALL_FAST_MODEL": SMALL_MODEL,
            "DISABLE_AUTOUPDATER": "1",
        }

    def command_line(self, ctx: AgentContext) -> str:
        """``claude --print --verbose --output-format stream-json --model M ...``."""
        args = ["claude", "--print", "--verbose", "--output-format", "stream-json"]
        args += ["--model", ctx.model]
        args += ["--effort", self.effort] if self.effort else []
        args += ["--dangerously-skip-permissions"]
        args += ["--mcp-config", str(ctx.paths.mcp_config)] if ctx.has_mcp_config else []
        # --mcp-config takes several files: without "--" it would swallow the prompt.
        return f"{shlex.join(args)} -- {self.prompt(ctx)}"
