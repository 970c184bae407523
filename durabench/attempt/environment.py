"""What an agent process is handed: the gateway's address and a placeholder, never a key.

An agent that calls a model gets its model API's base URL pointing at this host's model
gateway, and in the variable it reads its key from, a placeholder good only there and
only while its attempt runs. On an MCP lane an HTTP MCP server is reached through the
gateway the same way. The one secret still handed to a process in the sandbox is a stdio
MCP server's token: that server runs inside, next to the agent.
"""

from __future__ import annotations

from collections.abc import Mapping

from durabench.agents import Agent, AgentContext
from durabench.configs import mcp_env

__all__ = ["GatewayAccess", "agent_env"]


class GatewayAccess:
    """The gateway as one attempt's agent sees it."""

    def __init__(self, url: str, token: str, key_variable: str | None) -> None:
        self.url = url
        """The gateway's base URL on the sandboxes' network."""
        self.token = token
        """The attempt's placeholder key."""
        self.key_variable = key_variable
        """The variable the agent reads its key from (as its real key would be given);
        ``None`` when the worker has no key for the agent: it gets no placeholder."""

    @property
    def mcp_url(self) -> str:
        """Where the lane's HTTP MCP server is reached."""
        return f"{self.url}/mcp"


def agent_env(
    agent: Agent,
    ctx: AgentContext,
    *,
    gateway: GatewayAccess | None,
    base_path: str,
    environ: Mapping[str, str],
) -> dict[str, str]:
    """The agent's variables: its settings, the gateway's address and its placeholder key.

    ``base_path`` is what the model API's base URL ends in after the gateway's address.
    """
    env = {name: environ[name] for name in agent.setting_env if environ.get(name)}
    if gateway is not None:
        if gateway.key_variable:
            env[gateway.key_variable] = gateway.token
        if agent.base_url_env:
            env[agent.base_url_env] = gateway.url + base_path
    server = ctx.mcp
    if server is not None and agent.uses_mcp:
        if server.command:  # a stdio server runs in the sandbox: its token goes in
            values = mcp_env(server, environ)
        elif gateway is not None:
            values = {server.url_env: gateway.mcp_url, server.token_env: gateway.token}
        else:
            values = {}
        env |= values | agent.derived_env(ctx, values)
    return env
