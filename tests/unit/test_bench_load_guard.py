"""The benches' busy-machine guard: a ratio only from rounds whose load stayed calm.

Pure verdicts on given load samples and core counts; the round runner is driven by a
watch that reads scripted loads and never samples on its own, so nothing here is timed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _load import (  # noqa: E402  (bench/ is a directory of scripts, not a package)
    LoadGuard,
    LoadVerdict,
    LoadWatch,
    OwnCpu,
    guarded_ratio,
    judge,
    judge_own,
)


def test_a_round_within_twice_the_cores_is_calm() -> None:
    assert judge([0.5, 3.9, 4.0], cores=2) == LoadVerdict(calm=True, peak=4.0, limit=4.0)


def test_one_sample_above_twice_the_cores_makes_the_round_busy() -> None:
    verdict = judge([1.0, 4.01, 2.0], cores=2)
    assert not verdict.calm
    assert verdict.peak == 4.01


def test_the_limit_follows_the_cores() -> None:
    assert judge([7.5], cores=4).calm
    assert not judge([7.5], cores=2).calm


def test_no_sample_is_no_evidence_of_calm() -> None:
    assert not judge([], cores=2).calm


def test_the_ratio_is_printed_only_when_every_round_was_calm() -> None:
    calm = judge([1.0], cores=2)
    busy = judge([1.0, 9.5], cores=2)
    line = guarded_ratio("x/y", 0.25, "<= 0.2x", False, [calm, calm])
    assert line == "RATIO x/y = 0.25x (target <= 0.2x: NOT MET)"
    refused = guarded_ratio("x/y", 0.05, "<= 0.2x", True, [calm, busy, calm])
    assert refused.startswith("not measured: machine busy")
    assert "RATIO" not in refused
    assert "9.50" in refused


def test_no_round_watched_is_no_ratio() -> None:
    assert "RATIO" not in guarded_ratio("x/y", 1.0, None, True, [])


def _scripted(loads: list[float]) -> Iterator[LoadWatch]:
    """Watches reading ``loads`` in turn (start, end of each round); they never sample."""
    values = iter(loads)
    while True:
        yield LoadWatch(every_s=3600, read=lambda: next(values))


async def _no_wait(limit: float) -> None:
    """The guard waits for calm before a repeat; the scripted loads need no waiting."""


def _guard(loads: list[float], tries: int = 3) -> LoadGuard:
    watches = _scripted(loads)
    return LoadGuard(cores=2, tries=tries, watch=lambda: next(watches), wait=_no_wait)


def test_a_busy_round_is_run_again_and_a_calm_repeat_gives_the_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs: list[int] = []

    async def run() -> int:
        runs.append(len(runs))
        return len(runs)

    waited: list[float] = []

    async def wait(limit: float) -> None:
        waited.append(limit)

    watches = _scripted([1.0, 8.0, 3.0, 2.0])  # round 1 busy at its end, round 2 calm
    guard = LoadGuard(cores=2, watch=lambda: next(watches), wait=wait)
    assert asyncio.run(guard.round("round 1", run)) == 2
    assert len(runs) == 2
    assert waited == [4.0]  # it waited for calm once, under twice the cores, before the repeat
    assert guard.ratio_line("x/y", 0.2, None).startswith("RATIO x/y = 0.20x")
    out = capsys.readouterr().out
    assert "load before 1.00" in out and "load after 8.00" in out and "BUSY" in out


def test_repeats_are_bounded_and_a_machine_busy_throughout_gives_no_ratio() -> None:
    runs: list[int] = []

    async def run() -> None:
        runs.append(1)

    guard = _guard([9.0] * 20, tries=3)
    asyncio.run(guard.round("round 1", run))
    assert len(runs) == 3
    assert guard.ratio_line("x/y", 0.05, "<= 0.2x", True).startswith("not measured")


def test_one_busy_round_among_calm_ones_refuses_the_ratio() -> None:
    async def run() -> None:
        return None

    guard = _guard([1.0, 1.0, 9.0, 9.0], tries=1)
    asyncio.run(guard.round("round 1", run))
    asyncio.run(guard.round("round 2", run))
    assert guard.ratio_line("x/y", 0.1, None).startswith("not measured: machine busy")


# With the bench's own work subtracted (the concurrency bench): 2 cores, limit 4.

QUIET = OwnCpu(others_s=6.0, wall_s=100.0)
"""Other work took 6 CPU-s of the 200 the two cores had: 3%."""


def test_a_round_loaded_by_its_own_work_alone_is_calm() -> None:
    verdict = judge_own([1.0, 9.0, 12.0, 6.0], cores=2, cpu=QUIET)
    assert verdict.calm
    assert verdict.peak == 12.0
    assert "3% of the cores" in verdict.describe()


def test_the_plain_rule_still_decides_a_round_it_finds_calm() -> None:
    assert judge_own([1.0, 3.0], cores=2, cpu=OwnCpu(others_s=150.0, wall_s=100.0)).calm


def test_other_work_over_a_tenth_of_the_cores_makes_a_loaded_round_busy() -> None:
    verdict = judge_own([1.0, 9.0], cores=2, cpu=OwnCpu(others_s=22.0, wall_s=100.0))
    assert not verdict.calm
    assert "11% of the cores" in verdict.describe()
    assert judge_own([1.0, 9.0], cores=2, cpu=OwnCpu(others_s=20.0, wall_s=100.0)).calm


def test_a_round_begun_on_a_busy_machine_is_busy_whatever_others_took() -> None:
    verdict = judge_own([4.5, 9.0], cores=2, cpu=QUIET)
    assert not verdict.calm
    assert "load before the round 4.50" in verdict.describe()


def test_a_container_not_the_benchs_makes_a_loaded_round_busy() -> None:
    cpu = QUIET._replace(foreign=("someone-elses",))
    verdict = judge_own([1.0, 9.0], cores=2, cpu=cpu)
    assert not verdict.calm
    assert "someone-elses" in verdict.describe()


def test_no_sample_or_no_time_is_no_evidence_of_calm() -> None:
    assert not judge_own([], cores=2, cpu=QUIET).calm
    assert not judge_own([1.0, 9.0], cores=2, cpu=OwnCpu(others_s=0.0, wall_s=0.0)).calm


def test_a_guarded_round_judges_with_its_own_work_subtracted_after_waiting_for_calm() -> None:
    waited: list[float] = []

    async def wait(limit: float) -> None:
        waited.append(limit)

    async def run() -> OwnCpu:
        return QUIET

    watches = _scripted([1.0, 9.0])
    guard = LoadGuard(cores=2, watch=lambda: next(watches), wait=wait)
    asyncio.run(guard.round("round 1", run, own=lambda cpu: cpu))
    assert waited == [4.0]  # the warm-up's load falls first; the round ran once
    assert guard.ratio_line("x/y", 1.4, None).startswith("RATIO x/y = 1.40x")


def test_a_guarded_round_whose_others_were_busy_gives_no_ratio() -> None:
    async def run() -> OwnCpu:
        return OwnCpu(others_s=100.0, wall_s=100.0)

    guard = _guard([1.0, 9.0], tries=1)
    asyncio.run(guard.round("round 1", run, own=lambda cpu: cpu))
    line = guard.ratio_line("x/y", 1.4, None)
    assert line.startswith("not measured: machine busy")
    assert "50% of the cores" in line
