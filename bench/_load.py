"""The busy-machine guard: no bench prints a ratio taken while the machine was overloaded.

A ratio of two figures taken on a shared machine flatters whichever side ran while the
other users were quiet; a yardstick that slows far more under load than durabench does
(Harbor over Compose v1 at load 400 gave 0.05x, against 0.19-0.23x calm) makes it flatter
without bound. So every timed round is watched: the 1-minute load average is read before,
after and every few seconds during it, and a round whose load exceeded ``BUSY_FACTOR``
times the cores is repeated (at most ``ROUND_TRIES`` times in all). A ratio whose rounds
were not all calm is not printed: the bench says ``not measured: machine busy`` instead.

A bench whose own work is the load (the concurrency bench's 16 sandboxes on 2 cores take the
load past 4 by themselves) can instead be judged with its own CPU subtracted
(:func:`judge_own`): the rule is there to refuse figures distorted by *other* work, and what
other work can have done to a round is bounded by the CPU it took meanwhile.

The verdicts are pure functions of the samples and the core count (tested in
``tests/unit/test_bench_load_guard.py``); only :class:`LoadWatch` reads the clock.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import NamedTuple, TypeVar

__all__ = [
    "BUSY_FACTOR",
    "ROUND_TRIES",
    "LoadGuard",
    "LoadVerdict",
    "LoadWatch",
    "OTHERS_SHARE",
    "OwnCpu",
    "add_tries",
    "guarded_ratio",
    "judge",
    "judge_own",
    "ratio_text",
]

T = TypeVar("T")

BUSY_FACTOR = 2.0
"""A round is busy when the 1-minute load went above this many times the cores."""

ROUND_TRIES = 3
"""How many times a busy round is run in all before the bench gives up on calm."""

OTHERS_SHARE = 0.10
"""With a bench's own work subtracted: the most of the cores' time other work may take."""

SAMPLE_EVERY_S = 2.0
"""Seconds between load samples during a round (the kernel updates it every 5 s)."""

SETTLE_FOR_S = 120.0
"""Before a busy round is run again: at most this long waiting for the load to fall."""


class LoadVerdict(NamedTuple):
    """What the load did during one round."""

    calm: bool
    """Whether every sample stayed at or under ``limit`` (and there was one at all)."""
    peak: float
    """The highest 1-minute load seen (0.0 with no sample)."""
    limit: float
    """``BUSY_FACTOR`` x cores."""
    why: str = ""
    """How a verdict with the bench's own work subtracted was reached (:func:`judge_own`)."""

    def describe(self) -> str:
        """``peak 5.12 > 4.0 (2 x 2 cores)``, or ``<=`` when calm; then ``why``, if any."""
        sign = "<=" if self.peak <= self.limit else ">"
        peak = f"peak {self.peak:.2f} {sign} {self.limit:g} ({BUSY_FACTOR:g} x cores)"
        return f"{peak}; {self.why}" if self.why else peak


def judge(samples: Sequence[float], cores: int) -> LoadVerdict:
    """The verdict on a round from its 1-minute load samples on ``cores`` cores.

    No sample is no evidence of calm: such a round is busy.
    """
    limit = BUSY_FACTOR * max(cores, 1)
    if not samples:
        return LoadVerdict(calm=False, peak=0.0, limit=limit)
    peak = max(samples)
    return LoadVerdict(calm=peak <= limit, peak=peak, limit=limit)


class OwnCpu(NamedTuple):
    """A round's CPU-seconds that were not the bench's own, and what else ran meanwhile."""

    others_s: float
    """The machine's busy time minus the bench's processes, sandboxes and daemon (steal in)."""
    wall_s: float
    foreign: tuple[str, ...] = ()
    """Containers not the bench's seen running during the round (their CPU would hide in
    the sandboxes' and the daemon's, which count as the bench's)."""


def judge_own(samples: Sequence[float], cores: int, cpu: OwnCpu) -> LoadVerdict:
    """The verdict on a round with the bench's own work subtracted from the load.

    Calm when :func:`judge` says so. Else calm only when all of these hold, each of which
    keeps other work out rather than excusing it:

    * the load was calm before the round (the bench's own work had not begun);
    * no container but the bench's ran during it (their CPU would count as the bench's);
    * other work took at most ``OTHERS_SHARE`` of the cores' time during it: the most wall
      time it can have added to the round is its CPU-seconds over the cores.
    """
    total = judge(samples, cores)
    if total.calm or not samples:
        return total
    busy = total._replace(calm=False)
    if samples[0] > total.limit:
        return busy._replace(why=f"load before the round {samples[0]:.2f}")
    if cpu.foreign:
        return busy._replace(why=f"containers not the bench's ran: {', '.join(cpu.foreign)}")
    share = cpu.others_s / (max(cores, 1) * cpu.wall_s) if cpu.wall_s > 0 else 1.0
    why = f"other work took {share:.0%} of the cores (limit {OTHERS_SHARE:.0%})"
    return total._replace(calm=share <= OTHERS_SHARE, why=why)


def ratio_text(what: str, value: float, target: str | None, met: bool = True) -> str:
    """The closing line: ``RATIO <what> = <value>x (target <target>: met|NOT MET)``."""
    if target is None:
        return f"RATIO {what} = {value:.2f}x (no target)"
    return f"RATIO {what} = {value:.2f}x (target {target}: {'met' if met else 'NOT MET'})"


def guarded_ratio(
    what: str,
    value: float,
    target: str | None,
    met: bool,
    verdicts: Sequence[LoadVerdict],
) -> str:
    """``RATIO …`` when every round was calm, else ``not measured: machine busy …``.

    No round at all is not calm either: a ratio needs rounds that were watched.
    """
    busy = [v for v in verdicts if not v.calm]
    if verdicts and not busy:
        return ratio_text(what, value, target, met)
    worst = max(busy, key=lambda v: v.peak) if busy else None
    why = worst.describe() if worst else "no round was watched"
    return f"not measured: machine busy ({what}: {why}; run again on a calm machine)"


def add_tries(parser: argparse.ArgumentParser) -> None:
    """``--tries N``: how many times a busy round is run in all (1: never again)."""
    parser.add_argument(
        "--tries",
        type=int,
        default=ROUND_TRIES,
        help=f"runs of a round while the machine is busy (default {ROUND_TRIES})",
    )


def one_minute_load() -> float:
    """The 1-minute load average now."""
    return os.getloadavg()[0]


async def settle(limit: float, within_s: float = SETTLE_FOR_S) -> None:
    """Wait until the 1-minute load is at most ``limit``, or ``within_s`` have passed.

    A round run again at once would meet the same load: the average falls by about a
    third a minute once the machine quietens.
    """
    waited = 0.0
    while one_minute_load() > limit and waited < within_s:
        await asyncio.sleep(5.0)
        waited += 5.0


class LoadWatch:
    """Samples the 1-minute load from a thread while a block runs.

    ``with LoadWatch() as watch: ...`` then ``watch.samples``: the load at the start,
    every ``SAMPLE_EVERY_S`` seconds, and at the end.
    """

    def __init__(
        self, every_s: float = SAMPLE_EVERY_S, read: Callable[[], float] = one_minute_load
    ) -> None:
        self.every_s = every_s
        self.read = read
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append(self.read())

    def __enter__(self) -> LoadWatch:
        self.samples.append(self.read())
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(self.read())


class LoadGuard:
    """Runs a bench's timed rounds under a :class:`LoadWatch`; prints its guarded ratios.

    Each round prints the load before and after it (and its peak); a busy round is run
    again, up to ``tries`` times in all; the last try's verdict is kept. The bench then
    prints :meth:`ratio_line`, which is a ratio only if every kept verdict is calm.
    """

    def __init__(
        self,
        cores: int | None = None,
        tries: int = ROUND_TRIES,
        watch: Callable[[], LoadWatch] = LoadWatch,
        wait: Callable[[float], Awaitable[None]] = settle,
    ) -> None:
        self.cores = cores or os.cpu_count() or 1
        self.tries = max(tries, 1)
        self.watch = watch
        """Makes each round's watch (a test passes one that reads scripted loads)."""
        self.wait = wait
        """Waits for calm before a busy round is run again (given the limit)."""
        self.verdicts: list[LoadVerdict] = []

    async def round(
        self,
        label: str,
        run: Callable[[], Awaitable[T]],
        own: Callable[[T], OwnCpu] | None = None,
    ) -> T:
        """``run()`` once, or again while the machine was busy (bounded); its result.

        With ``own`` (what the result says of the CPU others took), the round is judged
        with the bench's own work subtracted (:func:`judge_own`), and it first waits for
        the load of the bench's previous work (a warm-up) to fall under the limit.
        """
        limit = BUSY_FACTOR * self.cores
        if own is not None:
            await self.wait(limit)
        for attempt in range(1, self.tries + 1):
            with self.watch() as watch:
                print(f"{label}: load before {watch.samples[0]:.2f}", flush=True)
                result = await run()
            if own is None:
                verdict = judge(watch.samples, self.cores)
            else:
                verdict = judge_own(watch.samples, self.cores, own(result))
            state = "calm" if verdict.calm else "BUSY"
            print(
                f"{label}: load after {watch.samples[-1]:.2f} ({verdict.describe()}: {state})",
                flush=True,
            )
            if verdict.calm or attempt == self.tries:
                break
            print(
                f"{label}: machine busy; waiting up to {SETTLE_FOR_S:g} s for calm, then "
                f"running it again ({attempt + 1}/{self.tries})",
                flush=True,
            )
            await self.wait(verdict.limit)
        self.verdicts.append(verdict)
        return result

    def ratio_line(self, what: str, value: float, target: str | None, met: bool = True) -> str:
        """The bench's closing line over every round run so far (see :func:`guarded_ratio`)."""
        return guarded_ratio(what, value, target, met, self.verdicts)
