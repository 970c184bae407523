"""The agent CLI's version, as the transcript reports it or ``--version`` prints it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from durabench.agents import read_events
from durabench.agents.cli_version import plain_version, transcript_version

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(
    ("printed", "version"),
    [
        ("2.1.332 (Claude Code)\n", "2.1.332"),
        ("codex-cli 0.169.0\n", "0.169.0"),
        ("0.61.0\n", "0.61.0"),
        ("v1.0.0-beta.2\n", "1.0.0-beta.2"),
        ("\x1b[1m2.0.14\x1b[0m", "2.0.14"),
    ],
)
def test_the_version_a_cli_prints_is_its_plain_version_token(printed: str, version: str) -> None:
    assert plain_version(printed) == version


@pytest.mark.parametrize(
    "printed",
    [
        "",
        "command not found",
        "latest",
        "1" * 50 + ".0",  # too long to be a version
        "x" * 10_000 + " 2.1.332",  # past the bytes read
        "<script>alert(1)</script>",
    ],
)
def test_output_without_a_plain_version_names_none(printed: str) -> None:
    assert plain_version(printed) is None


def test_a_real_claude_code_transcript_names_the_version_that_ran() -> None:
    recorded = json.loads((FIXTURES / "claude-code/2.1.332/overloaded.json").read_text())
    assert transcript_version(read_events(recorded["stdout"])) == "2.1.332"


def test_the_shared_real_transcripts_name_their_claude_code_version(
    shared_fixtures: Path,
) -> None:
    path = shared_fixtures / "classify" / "claude-completed.jsonl"
    events = read_events(path.read_text().splitlines())
    assert transcript_version(events) == events[0]["claude_code_version"]


@pytest.mark.parametrize(
    "events",
    [
        [{"type": "system", "subtype": "init", "claude_code_version": "2.1.332; rm -rf /"}],
        [{"type": "system", "subtype": "init"}, {"claude_code_version": "9.9.9"}],
        [{"type": "thread.started"}, {"type": "turn.completed"}],  # Codex prints none
    ],
)
def test_a_transcript_names_a_version_only_in_its_init_event_and_only_a_plain_one(
    events: list[dict[str, object]],
) -> None:
    assert transcript_version(events) is None
