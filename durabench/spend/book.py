"""A run's spend cap as one book, kept by the run's spend workflow for every host.

Money is counted in whole micro-dollars (:data:`MICROS`): sums of floats drift, and a cap
checked with a drifting sum is a cap that is passed by a rounding.

Two things are held against the cap, each for its own reason:

* **Blocks** held by each host's gateway. A gateway reserves each request's worst case
  from its host's block, on its own, and asks for another block (through its worker,
  :mod:`durabench.spend.broker`) when the block no longer covers a request. A host
  reports what it holds and what it has spent each time it asks, and gives back what it
  holds beyond its spending once the run's attempts have left it. The book grants a block
  only while the blocks held by all hosts fit under the cap, so the gateways together
  never spend past it (a request is charged at most its reserved worst case).
* **Pairs** started. A pair starts only when its expected cost (both lanes, the plan's
  high estimate) fits beside what every other pair spent or is expected to spend: a cap
  never leaves half a pair. A running pair counts the larger of its expectation and its
  spending so far; a pair that ended counts what it spent.

A host's report is cumulative and idempotent: a report sent twice, or an answer lost on
the way back, changes nothing but the host's holding, which the host's own file decides
downwards (a block the book granted but the host never wrote down is given back by the
host's next report).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MICROS",
    "BlockAnswer",
    "HostReport",
    "PairAnswer",
    "PairAsk",
    "SpendBook",
    "SpendCarried",
    "SpendProgress",
    "SpendState",
    "StartPairsInput",
    "micros",
    "usd",
]

MICROS = 1_000_000
"""Micro-dollars in a dollar."""


def micros(amount_usd: float) -> int:
    """``amount_usd`` in whole micro-dollars, rounded up (a reservation errs on the high side)."""
    return math.ceil(round(amount_usd * MICROS, 3))


def usd(amount: int) -> float:
    """Micro-dollars in dollars."""
    return amount / MICROS


class HostReport(BaseModel):
    """What one host's gateway holds and has spent for a run, and what it asks for."""

    model_config = ConfigDict(frozen=True)

    host: str
    """The host's id (its gateway's grant store)."""
    held: int = Field(ge=0)
    """Micro-dollars the host holds: the block written in its file (its gateway's limit)."""
    spent: dict[str, int] = Field(default_factory=dict)
    """Micro-dollars its gateway has charged, by task id, since the run began (cumulative)."""
    want: int = Field(default=0, ge=0)
    """Micro-dollars more it asks for (0: it asks for nothing, it only reports)."""


class BlockAnswer(BaseModel):
    """The book's answer to a host: what it may hold now."""

    model_config = ConfigDict(frozen=True)

    held: int
    """Micro-dollars the host may hold (its report's holding plus the block granted)."""
    granted: int
    """Micro-dollars granted by this answer."""
    exhausted: bool
    """The cap no longer covers what the host asked for."""


class PairAsk(BaseModel):
    """The run asks whether pairs may start (and says which pairs ended since it last asked)."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[str, ...]
    """Pairs that would start, in order."""
    expected: int = Field(ge=0)
    """Micro-dollars each pair is expected to cost (both lanes, the plan's high end)."""
    ended: dict[str, int] = Field(default_factory=dict)
    """Pairs that ended since the last ask, with what their attempts' ledgers say they cost
    (micro-dollars): they count that, or what the hosts reported, the larger, from now on
    (a host's last report may come after the pair's end)."""


class PairAnswer(BaseModel):
    """Which of the asked pairs may start: a prefix of them."""

    model_config = ConfigDict(frozen=True)

    started: tuple[str, ...]
    """May start now (their expectation is held for them)."""
    spent: int
    """Micro-dollars spent by the run so far, as its hosts last reported."""
    left: int
    """Micro-dollars of the cap not spent or expected by a running pair."""


class SpendState(BaseModel):
    """The book as the spend workflow carries it across continue-as-new."""

    cap: int = Field(ge=0)
    """The run's cap in micro-dollars."""
    block: int = Field(gt=0)
    """A host is granted at least this much at a time (less only at the cap)."""
    held: dict[str, int] = Field(default_factory=dict)
    """Micro-dollars each host holds."""
    spent: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Micro-dollars each host has charged, by task."""
    running: dict[str, int] = Field(default_factory=dict)
    """Pairs started and not known to have ended, with their expected cost."""
    metered: dict[str, int] = Field(default_factory=dict)
    """Pairs that ended, with what their attempts' ledgers say they cost."""


class SpendBook:
    """The rules over :class:`SpendState`; every method is one step, no waiting."""

    def __init__(self, state: SpendState) -> None:
        """Keep ``state`` (changed in place)."""
        self.state = state

    def held(self) -> int:
        """Micro-dollars held by all hosts together."""
        return sum(self.state.held.values())

    def spent(self) -> int:
        """Micro-dollars charged by all hosts together."""
        return sum(self.spent_by_task().values())

    def spent_by_task(self) -> dict[str, int]:
        """Micro-dollars charged per task, over every host."""
        out: dict[str, int] = {}
        for by_task in self.state.spent.values():
            for task, amount in by_task.items():
                out[task] = out.get(task, 0) + amount
        for task, amount in self.state.metered.items():
            out[task] = max(out.get(task, 0), amount)
        return out

    def report(self, report: HostReport) -> BlockAnswer:
        """Take a host's report; grant it a block if it asks and the cap covers it.

        The host's holding is what its report says (its file is what its gateway obeys);
        its spending only grows (a late report of an older figure changes nothing).
        """
        state = self.state
        mine = state.spent.setdefault(report.host, {})
        for task, amount in report.spent.items():
            mine[task] = max(mine.get(task, 0), amount)
        # Never less than it spent: a block given back while a request took from it
        # still counts what that request spent.
        held = max(report.held, sum(mine.values()))
        state.held[report.host] = held
        if report.want <= 0:
            return BlockAnswer(held=held, granted=0, exhausted=False)
        room = state.cap - self.held()
        if room < report.want:
            return BlockAnswer(held=held, granted=0, exhausted=True)
        granted = min(room, max(report.want, state.block))
        state.held[report.host] = held + granted
        return BlockAnswer(held=held + granted, granted=granted, exhausted=False)

    def committed(self) -> int:
        """What the pair rule holds: per running pair its expectation or spending.

        The larger of the two, and what every other pair spent.
        """
        spent = self.spent_by_task()
        total = sum(amount for task, amount in spent.items() if task not in self.state.running)
        for task, expected in self.state.running.items():
            total += max(expected, spent.get(task, 0))
        return total

    def start_pairs(self, ask: PairAsk) -> PairAnswer:
        """Which of ``ask.tasks`` may start: those whose expectation fits, in order.

        A pair asked for again (the run's answer was lost) keeps its place.
        """
        for task, amount in ask.ended.items():
            self.state.running.pop(task, None)
            self.state.metered[task] = max(self.state.metered.get(task, 0), amount)
        started: list[str] = []
        for task in ask.tasks:
            if task not in self.state.running:
                if self.committed() + ask.expected > self.state.cap:
                    break
                self.state.running[task] = ask.expected
            started.append(task)
        return PairAnswer(
            started=tuple(started),
            spent=self.spent(),
            left=max(0, self.state.cap - self.committed()),
        )


class StartPairsInput(BaseModel):
    """Input of the ``start_pairs`` activity: the run's ask of its book."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    ask: PairAsk


class SpendCarried(BaseModel):
    """The run's side of its cap, carried across continue-as-new."""

    model_config = ConfigDict(frozen=True)

    ended: dict[str, int] = Field(default_factory=dict)
    """Pairs that ended since the run last asked its book, with their metered cost."""
    stopped: bool = False
    """The cap was reached: no pair starts any more."""
    spent_usd: float = 0.0
    """What the pairs that ended cost, metered."""


class SpendProgress(BaseModel):
    """A run's spending as its progress shows it."""

    model_config = ConfigDict(frozen=True)

    spent_usd: float = 0.0
    """What the pairs that ended cost, metered."""
    cap_usd: float | None = None
    """The run's spend cap; ``None``: none."""
    stopped: bool = False
    """The cap was reached: no pair starts any more."""
