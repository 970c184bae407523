"""The MCP config file an MCP lane's agent reads, with secrets left as ``${VAR}``.

The file names the endpoint and token by environment variable (the ``.mcp.json`` expansion
syntax agents understand); the values reach the container only as the agent's environment,
at the moment it starts. So the file, the results directory and Temporal history never hold
a secret.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from durabench.models.config import McpServer

__all__ = ["mcp_config_json", "mcp_env", "missing_mcp_env"]


def mcp_config_json(server: McpServer) -> str:
    """The MCP config file's text for ``server``; secrets appear only as ``${VAR}``."""
    doc = {
        "mcpServers": {
            server.name: {
                "type": "http",
                "url": f"${{{server.url_env}}}{server.url_suffix}",
                "headers": {server.auth_header: f"{server.auth_scheme} ${{{server.token_env}}}"},
            }
        }
    }
    return json.dumps(doc, indent=2) + "\n"


def mcp_env(server: McpServer, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables the agent process needs for ``server``, read from ``environ``."""
    names = (server.url_env, server.token_env)
    return {name: environ[name] for name in names if environ.get(name)}


def missing_mcp_env(server: McpServer, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Names of the variables ``server`` needs that ``environ`` lacks."""
    return tuple(n for n in (server.url_env, server.token_env) if not environ.get(n))
