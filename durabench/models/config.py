"""Lane configs: what differs between the baseline and the MCP lane of a pair."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["CliRoute", "LaneConfig", "McpServer"]


ModelApi = Literal["anthropic", "openai", "gemini"]
"""The model APIs agents speak (and the gateway passes on)."""


class McpServer(BaseModel):
    """An MCP server: an HTTP endpoint or a command; its secrets are named, never stored.

    HTTP servers name the endpoint (``url_env``) and the token (``token_env``); command
    servers (``command``, run by the agent over stdio) get the token as ``token_env`` in
    their environment. Either way the value is read inside the activity.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    """Server name in the agent's MCP config."""
    url_env: str = ""
    """Environment variable holding the endpoint URL (HTTP servers)."""
    token_env: str
    """Environment variable holding the access token (read inside the activity)."""
    command: tuple[str, ...] = ()
    """Command line of a stdio server, run inside the sandbox; empty for HTTP servers."""
    url_suffix: str = ""
    """Path appended to the endpoint URL."""
    auth_header: str = "Authorization"
    """Header that carries the token."""
    auth_scheme: str = "token"
    """Scheme word before the token in the header value."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if bool(self.url_env) == bool(self.command):
            raise ValueError(
                f"MCP server {self.name!r} needs exactly one of url_env (an HTTP endpoint) "
                "and command (a stdio server)"
            )
        return self

    @property
    def env_names(self) -> tuple[str, ...]:
        """The variables the agent needs for this server."""
        return (self.url_env, self.token_env) if self.url_env else (self.token_env,)

    @property
    def header_value(self) -> str:
        """The auth header's value with the token as ``${VAR}``."""
        return f"{self.auth_scheme} ${{{self.token_env}}}".strip()


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


class CliRoute(BaseModel):
    """Models that need a particular agent CLI generation, and the version they get.

    A deprecated model snapshot is served only by an older CLI generation: its runs install
    that version, and leave out the options that generation does not take.
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    """The agent adapter (``claude-code``)."""
    models: tuple[str, ...]
    """Model names routed to ``version``, exactly as ``--model`` gives them."""
    version: str
    """The CLI version those models run (a plain version: npm installs it as named)."""
    lacks: tuple[str, ...] = ()
    """Agent options that version does not take (``effort``): left out of its runs."""
    why: str = ""
    """Why the models need it, in a sentence the plan shows."""
