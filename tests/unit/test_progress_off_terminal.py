"""Off a terminal (a pipe, CI, a log file), the run's progress is printed as lines.

A live view redraws in place and prints nothing to a pipe until the end: a log of a
two-hour run would hold nothing between the approval and the results. Here the run's
answers are scripted, and the lines are read from a console that is not a terminal.
"""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rich.console import Console

import starter.live
from durabench.models.pair import PairProgress
from durabench.models.suite_run import ProgressOutput, RunOutcome

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

STEPS = [
    ProgressOutput(run_id="r1", phase="awaiting_approval", total=2),
    ProgressOutput(
        run_id="r1", phase="running", total=2, running=("t1", "t2"), approved_by="ann",
        approved_at=NOW,
    ),
    ProgressOutput(
        run_id="r1", phase="running", total=2, done=1, running=("t2",), approved_by="ann",
        approved_at=NOW, by_class={"completed": 2},
    ),
    ProgressOutput(
        run_id="r1", phase="completed", total=2, done=2, approved_by="ann", approved_at=NOW,
        by_class={"completed": 3, "infra_rate_limit": 1},
    ),
]  # fmt: skip
BACKOFF = PairProgress.model_validate(
    {
        "task_id": "t2",
        "arms": [
            {"lane": "baseline", "attempt": 2, "state": "backoff", "last_class": "infra_rate_limit",
             "retry_at": NOW + timedelta(seconds=60)},
        ],
    }
)  # fmt: skip


class FakeRun:
    """The run's handle, answering the scripted steps; its result is ready after the last."""

    def __init__(self, ends_at: int = len(STEPS) - 1) -> None:
        self.step = -1
        self.ended = asyncio.Event()
        self.ends_at = ends_at
        """The step whose answer comes with the run's end."""

    async def result(self) -> RunOutcome:
        await self.ended.wait()
        return RunOutcome(run_id="r1", status="completed")

    async def query(self, query: str, **_: Any) -> Any:
        if query == "progress":
            self.step = min(self.step + 1, len(STEPS) - 1)
            if self.step == self.ends_at:
                self.ended.set()
            return STEPS[self.step]
        raise AssertionError(f"the run has no query {query!r}")


class FakePair:
    async def query(self, query: str, **_: Any) -> Any:
        assert query == "progress"
        return BACKOFF  # t2's baseline backs off before retry 2


class FakeClient:
    def __init__(self, run: FakeRun) -> None:
        self.run = run

    def get_workflow_handle(self, workflow_id: str, **_: Any) -> FakeRun | FakePair:
        return FakePair() if "/task/" in workflow_id else self.run


async def test_each_finished_pair_and_each_retry_is_a_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(starter.live, "console", Console(file=out, width=200))
    run = FakeRun()
    outcome = await starter.live.follow(FakeClient(run), run, every_s=0)  # type: ignore[arg-type]
    assert outcome.status == "completed"
    lines = out.getvalue().splitlines()
    assert any("approved by ann" in line for line in lines), lines
    assert any("t1 done: 1/2 pairs" in line for line in lines), lines
    assert any("t2 done: 2/2 pairs" in line for line in lines), lines
    retries = [line for line in lines if "t2 / baseline: retry 2" in line]
    assert len(retries) == 1 and "after infra_rate_limit" in retries[0], lines


async def test_the_last_pair_is_a_line_when_the_run_ends_between_two_looks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run ends after an answer that still had a pair running: its line still comes."""
    out = io.StringIO()
    monkeypatch.setattr(starter.live, "console", Console(file=out, width=200))
    run = FakeRun(ends_at=len(STEPS) - 2)
    await starter.live.follow(FakeClient(run), run, every_s=0)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert any("t2 done: 2/2 pairs" in line for line in lines), lines
    assert "r1: completed" in lines, lines
