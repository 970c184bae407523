"""On a terminal, the live view's last frame agrees with the summary printed under it.

The frame stays on screen above the results: when the run ended between two looks, a frame
from before the end would still say a pair runs. The view's frames are recorded as they are
drawn, and the last one is read.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console, RenderableType

import starter.live
from durabench.models.suite_run import ProgressOutput
from tests.unit.test_progress_off_terminal import NOW, STEPS, FakeClient, FakeRun


class RecordedLive:
    """A stand-in for rich's Live that keeps each frame drawn."""

    frames: list[RenderableType] = []

    def __init__(self, *_: Any, **__: Any) -> None:
        RecordedLive.frames = []

    def __enter__(self) -> RecordedLive:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def update(self, view: RenderableType) -> None:
        RecordedLive.frames.append(view)


def _text(view: RenderableType) -> str:
    console = Console(width=160, record=True, file=io.StringIO())
    console.print(view)
    return console.export_text()


@pytest.mark.parametrize("ends_at", [len(STEPS) - 2, len(STEPS) - 1])
async def test_the_last_frame_shows_the_run_ended_with_no_pair_running(
    monkeypatch: pytest.MonkeyPatch, ends_at: int
) -> None:
    """Whether the end came with the last answer or between two looks."""
    monkeypatch.setattr(starter.live, "console", Console(file=io.StringIO(), force_terminal=True))
    monkeypatch.setattr(starter.live, "Live", RecordedLive)
    run = FakeRun(ends_at=ends_at)
    outcome = await starter.live.follow(FakeClient(run), run, every_s=0)  # type: ignore[arg-type]
    last = _text(RecordedLive.frames[-1])
    assert outcome.status == "completed"
    assert "r1 completed: 2/2 pairs done\n" in last, last


def test_an_ended_run_has_nothing_queued() -> None:
    """A run cancelled with one pair of two done: the other was not run, not queued."""
    ended = ProgressOutput(run_id="r1", phase="cancelled", total=2, done=1)
    text = _text(starter.live.progress_view(ended, [], NOW))
    assert "r1 cancelled: 1/2 pairs done, 1 not run\n" in text, text
    going = ended.model_copy(update={"phase": "running", "running": ("t2",), "done": 0})
    assert "0/2 pairs done, 1 running, 1 queued" in _text(
        starter.live.progress_view(going, [], NOW)
    )
