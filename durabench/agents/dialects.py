"""Each transcript dialect's parser, by name, and the worker's streaming read of a transcript.

The agent writes its transcript, up to the read cap (64 MiB by default), so the worker reads
it as a stream of lines into the facts the classifier needs: one event's memory at a time
and the last :data:`~durabench.agents.transcript.KEPT_ERRORS` errors, never a dict per line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from durabench.agents.claude_transcript import parse_claude
from durabench.agents.codex_transcript import parse_codex
from durabench.agents.gemini_transcript import parse_gemini
from durabench.agents.transcript import TranscriptFacts, iter_events, lines_of
from durabench.models.verdict import TranscriptFormat

__all__ = ["PARSERS", "parse_transcript", "transcript_facts"]

PARSERS: dict[str, Callable[[Iterable[dict[str, Any]]], TranscriptFacts]] = {
    "claude-code": parse_claude,
    "codex-cli": parse_codex,
    "gemini-cli": parse_gemini,
}
"""The parser of each dialect; each reads its events once, in order."""


def parse_transcript(
    fmt: TranscriptFormat | None, events: Iterable[dict[str, Any]]
) -> TranscriptFacts:
    """Facts of ``events`` in dialect ``fmt`` (no dialect: empty facts)."""
    if fmt is None:
        return TranscriptFacts()
    return PARSERS[fmt](events)


def transcript_facts(fmt: TranscriptFormat | None, data: bytes) -> TranscriptFacts:
    """Facts of the JSON-lines transcript ``data``, read line by line."""
    return parse_transcript(fmt, iter_events(lines_of(data)))
