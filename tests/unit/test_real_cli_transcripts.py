"""Transcripts the real CLIs printed, read as the classifier reads them.

Recorded from whole offline sessions (``tests/integration/test_real_*.py``) on the MCP
lane: a search through the MCP server, one shell command, a final message. The scripted
API sent, over its three answers, 2,800 fresh input tokens, 400 cached and 72 output:
a transcript's own figures must say the same, or every attempt gets a mismatch note.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from durabench.agents.transcript import read_events
from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, TokenUsage, TranscriptFormat

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SENT = TokenUsage(input=2800, output=72, cache_read=400)


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("codex-cli", "codex-cli/0.169.0/mcp_session.jsonl"),
        ("gemini-cli", "gemini-cli/0.61.0/mcp_session.jsonl"),
    ],
)
def test_a_real_session_reads_as_completed_with_the_tokens_the_api_sent(
    fmt: TranscriptFormat, name: str
) -> None:
    events = read_events((FIXTURES / name).read_text().splitlines())
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


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("codex-cli", "codex-cli/0.169.0/no_key.json"),
        ("gemini-cli", "gemini-cli/0.61.0/no_key.json"),
    ],
)
def test_a_real_cli_without_a_key_is_infra_auth(fmt: TranscriptFormat, name: str) -> None:
    """What each CLI printed with its key variable empty (no key on the worker, so no
    placeholder): Codex fails its turn, Gemini exits 41 before any session. Neither is
    the model's doing. Recorded by running each npm CLI on a host with durabench's own
    ``config.toml`` / ``settings.json`` and command line (the same words in a sandbox:
    ``test_real_*_without_a_key_is_infra_auth``)."""
    fx = json.loads((FIXTURES / name).read_text())
    data = ClassifyInput(
        transcript_format=fmt,
        events=read_events(fx["stdout"]),
        exit_code=fx["exit_code"],
        stderr_tail=fx["stderr_tail"],
        requested_model="gemini-2.5-flash" if fmt == "gemini-cli" else "gpt-5-codex",
        model_via_gateway=True,  # and no request reached the gateway
    )
    assert classify(data).exit_class == "infra_auth"
