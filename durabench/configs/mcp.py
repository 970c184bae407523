"""The MCP config file an MCP lane's agent reads, with secrets left as ``${VAR}``.

The file names the endpoint and token by environment variable (the ``.mcp.json`` expansion
syntax agents understand); the values reach the container only as the agent's environment,
at the moment it starts. So the file, the results directory and Temporal history never hold
a secret.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from durabench.models.config import McpServer

__all__ = ["mcp_config_json", "mcp_env", "mcp_server_entry", "missing_mcp_env"]


def mcp_server_entry(server: McpServer) -> dict[str, Any]:
    """``server`` as an ``mcpServers`` entry (the Claude Code ``.mcp.json`` dialect)."""
    if server.command:
        token = f"${{{server.token_env}}}"
        return {
            "type": "stdio",
            "command": server.command[0],
            "args": list(server.command[1:]),
            "env": {server.token_env: token},
        }
    return {
        "type": "http",
        "url": f"${{{server.url_env}}}{server.url_suffix}",
        "headers": {server.auth_header: server.header_value},
    }


def mcp_config_json(server: McpServer) -> str:
    """The MCP config file's text for ``server``; secrets appear only as ``${VAR}``."""
    doc = {"mcpServers": {server.name: mcp_server_entry(server)}}
    return json.dumps(doc, indent=2) + "\n"


def mcp_env(server: McpServer, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables the agent process needs for ``server``, read from ``environ``."""
    return {name: environ[name] for name in server.env_names if environ.get(name)}


def missing_mcp_env(server: McpServer, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Names of the variables ``server`` needs that ``environ`` lacks."""
    return tuple(n for n in server.env_names if not environ.get(n))
