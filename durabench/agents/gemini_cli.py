"""Google's Gemini CLI, headless: ``gemini --output-format stream-json``.

Gemini reads MCP servers from ``~/.gemini/settings.json`` and expands ``${VAR}`` there, so
the file names the endpoint and token by variable, as the lane's ``mcp.json`` does.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, ClassVar

from durabench.agents.base import AgentContext
from durabench.agents.cli import AGENT_HOME, NODE_RUNTIME, CliAgent
from durabench.agents.registry import agent
from durabench.models.config import McpServer
from durabench.models.verdict import TranscriptFormat

__all__ = ["GeminiCliAgent"]


def _mcp_entry(server: McpServer) -> dict[str, Any]:
    token = f"${{{server.token_env}}}"
    if server.command:
        return {
            "command": server.command[0],
            "args": list(server.command[1:]),
            "env": {server.token_env: token},
        }
    return {
        "httpUrl": f"${{{server.url_env}}}{server.url_suffix}",
        "headers": {server.auth_header: server.header_value},
    }


@agent("gemini-cli")
class GeminiCliAgent(CliAgent):
    """Google's Gemini CLI."""

    package = "@google/gemini-cli"
    version = "0.61.0"
    binary = "gemini"
    node = NODE_RUNTIME
    takes_effort = False
    secret_env: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    model_api = "gemini"
    base_url_env = "GOOGLE_GEMINI_BASE_URL"

    def transcript_format(self, ctx: AgentContext) -> TranscriptFormat:
        """Gemini's stream-json."""
        return "gemini-cli"

    def config_files(self, ctx: AgentContext) -> dict[str, str]:
        """``settings.json`` with the lane's MCP server; none on the baseline lane."""
        if ctx.mcp is None:
            return {}
        doc = {"mcpServers": {ctx.mcp.name: _mcp_entry(ctx.mcp)}}
        return {f"{AGENT_HOME}/.gemini/settings.json": json.dumps(doc, indent=2) + "\n"}

    def command_line(self, ctx: AgentContext) -> str:
        """``gemini --output-format stream-json --model M --yolo --prompt ...``."""
        args = ["gemini", "--output-format", "stream-json", "--model", ctx.model, "--yolo"]
        return f"{shlex.join(args)} --prompt {self.prompt(ctx)}"
