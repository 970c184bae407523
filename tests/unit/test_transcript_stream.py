"""A transcript is read as a stream: a flood at the size cap costs the worker little memory.

The agent writes its transcript, so it may write 64 MiB of ``{}`` lines or of errors; the
worker keeps only the facts the classifier needs, never one dict per line.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from durabench.agents.dialects import transcript_facts
from durabench.agents.trajectory import trajectory_of
from durabench.agents.transcript import EventFile
from durabench.models.verdict import TranscriptFormat

_SIZE = 2 << 20
"""A flood big enough that one object per line shows (the cap is 64 MiB; peak scales)."""


def _peak(fmt: TranscriptFormat, data: bytes) -> int:
    tracemalloc.start()
    try:
        transcript_facts(fmt, data)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("fmt", "line"),
    [
        ("claude-code", b"{}\n"),
        ("codex-cli", b'{"type":"error","message":"x"}\n'),
        ("gemini-cli", b'{"type":"error","message":"x"}\n'),
    ],
)
def test_a_flood_at_the_cap_is_read_in_memory_far_below_its_size(
    fmt: TranscriptFormat, line: bytes
) -> None:
    data = line * (_SIZE // len(line))
    assert _peak(fmt, data) < _SIZE // 4  # whole, it was about 54 times its size


def test_a_stream_of_gemini_deltas_is_joined_whole() -> None:
    deltas = [{"type": "message", "role": "assistant", "content": "ab", "delta": True}] * 1000
    data = "".join(json.dumps(e) + "\n" for e in deltas).encode()
    facts = transcript_facts("gemini-cli", data)
    assert facts.last_message == "ab" * 1000 and facts.n_events == 1000


def test_only_the_last_errors_are_kept_with_their_positions() -> None:
    lines = [json.dumps({"type": "error", "message": f"e{i}"}) for i in range(5000)]
    facts = transcript_facts("codex-cli", ("\n".join(lines) + "\nnot json\n").encode())
    assert facts.n_events == 5000
    assert facts.errors[-1].text == "e4999" and facts.errors[-1].index == 4999
    assert len(facts.errors) <= 64


def test_the_kept_transcript_becomes_a_trajectory_without_being_held_whole(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "stdout.txt"
    init = b'{"type":"system","subtype":"init","model":"m"}\n'
    done = b'{"type":"result","subtype":"success","result":"Done."}\n'
    flood = _SIZE // 2
    kept.write_bytes(init + done + b"{}\n" * (flood // 3))  # a flood after the session
    tracemalloc.start()
    try:
        trajectory = trajectory_of(
            "claude-code", EventFile(kept), agent="claude-code", model="m", attempt_id="a"
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert trajectory is not None and trajectory.steps[-1].message == "Done."
    assert peak < flood // 4
