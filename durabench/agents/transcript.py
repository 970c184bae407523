"""What a transcript says, whatever agent wrote it; parsed by one module per dialect."""

from __future__ import annotations

import json
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.verdict import TokenUsage

__all__ = ["ErrorText", "McpServerState", "TranscriptFacts", "read_events"]


class ErrorText(BaseModel):
    """An error the agent or its API reported, with where it stood in the transcript."""

    model_config = ConfigDict(frozen=True)

    index: int
    """Position of the event in the transcript (0-based)."""
    text: str
    """The error's text, with any status or error code the event carried."""


class McpServerState(BaseModel):
    """An MCP server as the agent CLI reported it when its session began."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The server's name in the agent's MCP config."""
    status: str
    """Its state in the CLI's words (Claude Code: ``connected``, ``failed``,
    ``needs-auth``, ``pending``)."""


class TranscriptFacts(BaseModel):
    """The facts a classifier needs from a transcript."""

    model_config = ConfigDict(frozen=True)

    n_events: int = 0
    """Events in the transcript."""
    served_model: str | None = None
    """The model the init event names."""
    errors: tuple[ErrorText, ...] = ()
    """Errors: synthetic API-error turns, error results, error events."""
    errored: bool = False
    """Whether the session's final result is an error."""
    last_message: str = ""
    """The agent's final message."""
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens used."""
    cost_usd: float | None = None
    """Cost the agent reported."""
    retrying: str = ""
    """The model-API retry the session was in when it ended (status and error), or ``""``:
    a CLI killed or giving up while it retries measured the provider, not the model."""
    awaiting_model: bool = False
    """The transcript ends where the CLI had asked its model (the prompt or a tool result)
    and no answer followed; only set by dialects whose CLI prints its retries elsewhere."""
    mcp_servers: tuple[McpServerState, ...] | None = None
    """The MCP servers the CLI reported at session start; ``None`` when the transcript
    carries no such report (Codex and Gemini print none)."""


def read_events(lines: Iterable[str]) -> list[dict[str, object]]:
    """JSON objects of a JSON-lines transcript; lines that are not JSON objects are skipped."""
    events = []
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events
