"""OpenAI's Codex CLI, headless: ``codex exec --json``.

Codex reads MCP servers from ``$CODEX_HOME/config.toml`` and cannot expand ``${VAR}`` in
it, so the file holds the endpoint (configuration, not a secret) and names the variable
whose value is the auth header (``env_http_headers``); the activity sets that variable.
The container is the sandbox, so Codex's own sandbox and approvals are off.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import ClassVar

from durabench.agents.base import AgentContext
from durabench.agents.cli import AGENT_HOME, NODE_RUNTIME, CliAgent
from durabench.agents.registry import agent
from durabench.models.config import McpServer
from durabench.models.verdict import TranscriptFormat

__all__ = ["MCP_HEADER_ENV", "CodexCliAgent"]

CODEX_HOME = f"{AGENT_HOME}/.codex"
MCP_HEADER_ENV = "DURABENCH_MCP_AUTH_HEADER"
"""Holds the MCP auth header's value (``token <secret>``), set inside the activity."""


def _toml(value: str | list[str]) -> str:
    return json.dumps(value)  # a JSON string or list of strings is valid TOML


def _mcp_toml(server: McpServer, url: str) -> str:
    lines = [f"[mcp_servers.{_toml(server.name)}]"]
    if server.command:
        lines += [
            f"command = {_toml(server.command[0])}",
            f"args = {_toml(list(server.command[1:]))}",
        ]
        lines += [f"env_vars = {_toml([server.token_env])}"]
    else:
        lines += [f"url = {_toml(url + server.url_suffix)}"]
        lines += [f"env_http_headers = {{ {_toml(server.auth_header)} = {_toml(MCP_HEADER_ENV)} }}"]
    return "\n".join(lines) + "\n"


@agent("codex-cli")
class CodexCliAgent(CliAgent):
    """OpenAI's Codex CLI."""

    package = "@openai/codex"
    version = "0.169.0"
    binary = "codex"
    node = NODE_RUNTIME
    secret_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY", "CODEX_API_KEY")
    model_api = "openai"
    base_url_env = "OPENAI_BASE_URL"

    def transcript_format(self, ctx: AgentContext) -> TranscriptFormat:
        """Codex's ``exec --json`` events."""
        return "codex-cli"

    def env(self, ctx: AgentContext) -> dict[str, str]:
        """Its config home, under the agent's home."""
        return {"CODEX_HOME": CODEX_HOME}

    def config_files(self, ctx: AgentContext) -> dict[str, str]:
        """``config.toml`` with the lane's MCP server; none on the baseline lane."""
        if ctx.mcp is None:
            return {}
        return {f"{CODEX_HOME}/config.toml": _mcp_toml(ctx.mcp, ctx.mcp_url)}

    def derived_env(self, ctx: AgentContext, mcp_values: Mapping[str, str]) -> dict[str, str]:
        """The auth header's value, which ``env_http_headers`` reads from a variable."""
        server = ctx.mcp
        if server is None or server.command or not mcp_values.get(server.token_env):
            return {}
        return {MCP_HEADER_ENV: f"{server.auth_scheme} {mcp_values[server.token_env]}".strip()}

    def command_line(self, ctx: AgentContext) -> str:
        """``codex exec --json --model M [-c model_reasoning_effort=E] ...``."""
        args = ["codex", "exec", "--json", "--model", ctx.model]
        args += ["-c", f"model_reasoning_effort={self.effort}"] if self.effort else []
        args += ["--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"]
        return f"{shlex.join(args)} -- {self.prompt(ctx)}"
