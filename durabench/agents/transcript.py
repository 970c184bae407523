"""What a transcript says, whatever agent wrote it; parsed by one module per dialect."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from durabench.documents import loads_json
from durabench.models.verdict import TokenUsage

__all__ = [
    "KEPT_ERRORS",
    "ErrorText",
    "EventFile",
    "McpServerState",
    "TranscriptFacts",
    "error_text",
    "iter_events",
    "lines_of",
    "read_events",
]

KEPT_ERRORS = 64
"""Errors a parser keeps, the last ones: the classifier reads only the session's end, and
an agent can print millions of errors."""
_ERROR_CHARS = 2000
"""Characters kept of one error's text (reasons quote 240)."""


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
    """Errors: synthetic API-error turns, error results, error events; the last
    :data:`KEPT_ERRORS` of them, each cut to its first 2,000 characters."""
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


def error_text(text: str) -> str:
    """An error's text as kept: its start."""
    return text[:_ERROR_CHARS]


def lines_of(data: bytes) -> Iterator[bytes]:
    """The lines of ``data`` one at a time, never all at once (a flood has millions)."""
    return iter(io.BytesIO(data))


def iter_events(lines: Iterable[str | bytes]) -> Iterator[dict[str, object]]:
    """JSON objects of a JSON-lines transcript, one at a time; other lines are skipped.

    A stream, so a transcript of millions of lines costs one event's memory at a time.
    """
    for line in lines:
        text = line.strip()
        if not (text.startswith(b"{") if isinstance(text, bytes) else text.startswith("{")):
            continue
        try:
            value = loads_json(text)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(value, dict):
            yield value


def read_events(lines: Iterable[str | bytes]) -> list[dict[str, object]]:
    """JSON objects of a JSON-lines transcript, as a list.

    For small transcripts (tests, ``starter classify``); the worker streams with
    :func:`iter_events`.
    """
    return list(iter_events(lines))


class EventFile:
    """The events of a JSON-lines file, read from disk again at each iteration.

    For readers that pass over a transcript more than once (the trajectory): never more
    than one event in memory, whatever the file's size. A missing file has no events.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Iterator[dict[str, object]]:
        try:
            f = self.path.open("rb")
        except (FileNotFoundError, IsADirectoryError):
            return
        with f:
            yield from iter_events(f)
