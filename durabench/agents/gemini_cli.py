"""Google's Gemini CLI, headless: ``gemini --output-format stream-json``.

Gemini CLI (0.61) picks an auth type ``gateway`` when ``GOOGLE_GEMINI_BASE_URL`` is set,
and its own headless check then refuses it ("Invalid auth method selected."); so
``~/.gemini/settings.json`` selects the API key auth (``GEMINI_API_KEY``, sent as
``x-goog-api-key`` to the base URL) on every lane. It also turns folder trust off (an
untrusted folder turns ``--yolo`` back into approvals, which headless means refusals)
and usage statistics and telemetry off (nothing leaves the sandbox but model calls). A
worker's ``GOOGLE_API_KEY`` reaches it as ``GEMINI_API_KEY``.

Gemini reads MCP servers from the same file and expands ``${VAR}`` there, so the file
names the endpoint and token by variable, as the lane's ``mcp.json`` does.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, ClassVar

from durabench.agents.agent_registry import agent
from durabench.agents.base import AgentContext
from durabench.agents.cli import AGENT_HOME, NODE_RUNTIME, CliAgent
from durabench.models.config import McpServer
from durabench.models.verdict import TranscriptFormat

__all__ = ["SETTINGS", "GeminiCliAgent"]

SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}
"""Headless against a base URL with an API key: no auth dialog, no trust prompt."""
_KEY = 'GEMINI_API_KEY="${GEMINI_API_KEY:-${GOOGLE_API_KEY:-}}"'
"""The placeholder in the variable the API key auth reads, whichever one it came in."""


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
        """``settings.json``: :data:`SETTINGS`, and the lane's MCP server (not on baseline)."""
        mcp = {} if ctx.mcp is None else {"mcpServers": {ctx.mcp.name: _mcp_entry(ctx.mcp)}}
        doc = SETTINGS | mcp
        return {f"{AGENT_HOME}/.gemini/settings.json": json.dumps(doc, indent=2) + "\n"}

    def command_line(self, ctx: AgentContext) -> str:
        """``gemini --output-format stream-json --model M --yolo --prompt ...``."""
        args = ["gemini", "--output-format", "stream-json", "--model", ctx.model, "--yolo"]
        return f"{_KEY} {shlex.join(args)} --prompt {self.prompt(ctx)}"
