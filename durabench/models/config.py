"""Lane configs: what differs between the baseline and the MCP lane of a pair."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["LaneConfig", "McpServer"]


class McpServer(BaseModel):
    """An MCP server reached over HTTP; its endpoint and token are named, never stored."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Server name in the agent's MCP config."""
    url_env: str
    """Environment variable holding the endpoint URL (read inside the activity)."""
    token_env: str
    """Environment variable holding the access token (read inside the activity)."""
    url_suffix: str = ""
    """Path appended to the endpoint URL."""
    auth_header: str = "Authorization"
    """Header that carries the token."""
    auth_scheme: str = "token"
    """Scheme word before the token in the header value."""


class LaneConfig(BaseModel):
    """One config of the registry, such as ``baseline`` or ``sourcegraph_full``."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Registry name; also the lane name in results."""
    description: str = ""
    """What the config is for."""
    official: bool = False
    """Whether results of this config count in official numbers."""
    mcp: McpServer | None = None
    """The MCP server of the lane; ``None`` for baseline."""
    instruction_file: str = "instruction.md"
    """Instruction file the lane uses; falls back to ``instruction.md`` when absent."""
    dockerfile: str = "Dockerfile"
    """Dockerfile variant the lane uses; falls back to ``Dockerfile`` when absent."""
    unavailable: str = ""
    """Why the config cannot run (an eval-matrix config whose MCP setup is unknown)."""
