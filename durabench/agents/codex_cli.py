"""OpenAI's Codex CLI, headless: ``codex exec --json``.

Codex (0.169) ignores ``OPENAI_BASE_URL`` and sends no key from ``OPENAI_API_KEY`` with
its built-in provider, and it tries a WebSocket to the Responses API before HTTP. So
``$CODEX_HOME/config.toml`` names a provider of its own: the Responses API over HTTP
with the key from ``OPENAI_API_KEY`` as a bearer; its ``base_url`` is passed with ``-c``
from ``OPENAI_BASE_URL`` (the gateway's address) when the command runs, as the file
cannot expand variables. A worker's ``CODEX_API_KEY`` reaches it as ``OPENAI_API_KEY``.

Codex reads MCP servers from the same file, so it holds the endpoint (configuration,
not a secret) and names the variable whose value is the auth header
(``env_http_headers``); the activity sets that variable. The container is the sandbox,
so Codex's own sandbox and approvals are off.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import ClassVar

from durabench.agents.agent_registry import agent
from durabench.agents.base import AgentContext
from durabench.agents.cli import AGENT_HOME, NODE_RUNTIME, CliAgent
from durabench.models.config import McpServer
from durabench.models.verdict import TranscriptFormat

__all__ = ["MCP_HEADER_ENV", "CodexCliAgent"]

CODEX_HOME = f"{AGENT_HOME}/.codex"
PROVIDER = "durabench"
"""The model provider ``config.toml`` defines (``openai`` is built in and cannot be)."""
PROVIDER_TOML = f"""model_provider = "{PROVIDER}"

[model_providers.{PROVIDER}]
name = "durabench model gateway"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = false
"""
"""The provider: the Responses API over HTTP, the key from ``OPENAI_API_KEY``."""
_OPENAI = "https://api.openai.com/v1"
_BASE_URL = f'-c "model_providers.{PROVIDER}.base_url=\\"${{OPENAI_BASE_URL:-{_OPENAI}}}\\""'
"""A ``-c`` option the shell completes: the base URL the agent was handed, as TOML."""
_KEY = 'OPENAI_API_KEY="${OPENAI_API_KEY:-${CODEX_API_KEY:-}}"'
"""The placeholder in the variable the provider reads, whichever one it came in."""
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
        """``config.toml``: the provider, and the lane's MCP server (none on the baseline)."""
        mcp = "" if ctx.mcp is None else "\n" + _mcp_toml(ctx.mcp, ctx.mcp_url)
        return {f"{CODEX_HOME}/config.toml": PROVIDER_TOML + mcp}

    def derived_env(self, ctx: AgentContext, mcp_values: Mapping[str, str]) -> dict[str, str]:
        """The auth header's value, which ``env_http_headers`` reads from a variable."""
        server = ctx.mcp
        if server is None or server.command or not mcp_values.get(server.token_env):
            return {}
        return {MCP_HEADER_ENV: f"{server.auth_scheme} {mcp_values[server.token_env]}".strip()}

    def command_line(self, ctx: AgentContext) -> str:
        """``codex exec --json --model M -c <base_url> [-c model_reasoning_effort=E] ...``."""
        args = ["codex", "exec", "--json", "--model", ctx.model]
        effort = ["-c", f"model_reasoning_effort={self.effort}"] if self.effort else []
        flags = ["--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"]
        head = f"{_KEY} {shlex.join(args)} {_BASE_URL}"
        return f"{head} {shlex.join([*effort, *flags])} -- {self.prompt(ctx)}"
