"""Transcripts the real CLIs printed, read as the classifier reads them.

Recorded from whole offline sessions (``tests/integration/test_real_*.py``) on the MCP
lane: a search through the MCP server, one shell command, a final message. The scripted
API sent, over its three answers, 2,800 fresh input tokens, 400 cached and 72 output:
a transcript's own figures must say the same, or every attempt gets a mismatch note.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.agents.transcript import read_events
from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, TokenUsage, TranscriptFormat

HERE = Path(__file__).parent / "transcripts"
SENT = TokenUsage(input=2800, output=72, cache_read=400)


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("codex-cli", "codex-cli-0.169.0-mcp-session.jsonl"),
        ("gemini-cli", "gemini-cli-0.61.0-mcp-session.jsonl"),
    ],
)
def test_a_real_session_reads_as_completed_with_the_tokens_the_api_sent(
    fmt: TranscriptFormat, name: str
) -> None:
    events = read_events((HERE / name).read_text().splitlines())
    data = ClassifyInput(
        transcript_format=fmt,
        events=events,
        exit_code=0,
        files_changed=1,
        requested_model="gemini-2.5-flash" if fmt == "gemini-cli" else "gpt-5-codex",
    )
    v = classify(data)
    assert (v.exit_class, v.last_message) == ("completed", "Fixed the GELU coefficient.")
    assert v.tokens == SENT
