"""The run's side of its cap tells its book of every pair that ended, exactly once.

:meth:`RunSpend.afford` awaits the book's answer; pairs may end meanwhile (their watchers
run on the same event loop). A pair whose end the book never hears of stays running at
its expected cost forever: the run reaches its cap early and leaves pairs not run. Here
the ``start_pairs`` activity is a stand-in (the book's side is
:mod:`tests.unit.test_spend_arithmetic`), so the interleavings are chosen, not hoped for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import workflows.spend_gate as spend_gate
from durabench.models.agent import AgentSpec
from durabench.models.pair import PairDone
from durabench.models.run import PlanSummary, RunRequest, TaskRef
from durabench.spend import PairAnswer, StartPairsInput, micros
from workflows.spend_gate import RunSpend

PLAN = PlanSummary(
    request=RunRequest(
        run_id="r1", suite="pytorch", agent=AgentSpec(model="m-1"), max_spend_usd=100.0
    ),
    lanes=("baseline", "sourcegraph_full"),
    task_count=4,
    estimated_agent_hours=1.5,
    results_dir="/runs/r1",
)


class _Book:
    """Stands in for ``start_pairs``: keeps every ask; runs ``during`` while it 'waits'."""

    def __init__(self) -> None:
        self.asks: list[StartPairsInput] = []
        self.during: Callable[[], None] = lambda: None

    async def execute_activity_method(self, _method: Any, data: StartPairsInput, **_: Any) -> Any:
        self.asks.append(data)
        self.during()  # a pair's watcher runs while the run waits for the answer
        self.during = lambda: None
        return PairAnswer(started=data.ask.tasks, spent=0, left=0)


@pytest.fixture
def book(monkeypatch: pytest.MonkeyPatch) -> _Book:
    stand_in = _Book()
    monkeypatch.setattr(
        spend_gate,
        "workflow",
        SimpleNamespace(execute_activity_method=stand_in.execute_activity_method),
    )
    return stand_in


def _task(n: int) -> TaskRef:
    return TaskRef(task_id=f"t{n}", task_dir=f"/tasks/t{n}")


def _ended(task: str, usd: float) -> PairDone:
    return PairDone(task_id=task, by_class={}, cost_usd=usd)


async def test_a_pair_that_ends_while_the_run_asks_is_told_at_the_next_ask(book: _Book) -> None:
    gate = RunSpend("r1")
    gate.pair_ended(PLAN, _ended("t0", 1.0))
    book.during = lambda: gate.pair_ended(PLAN, _ended("t1", 2.0))
    await gate.afford(PLAN, [_task(2)], running=1)
    await gate.afford(PLAN, [_task(3)], running=1)
    assert book.asks[0].ask.ended == {"t0": micros(1.0)}
    assert book.asks[1].ask.ended == {"t1": micros(2.0)}, "t1 ended during the first ask"


# One step: a pair ends (at a cost in dollars; before an ask, or while the run waits for
# its answer), or the run asks.
_STEP = st.one_of(
    st.tuples(st.just("end"), st.integers(0, 5), st.booleans()),
    st.tuples(st.just("ask"), st.just(0), st.just(False)),
)


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(_STEP, max_size=20))
def test_every_ended_pair_reaches_the_book_whenever_it_ends(
    steps: list[tuple[str, int, bool]],
) -> None:
    """The family: whatever ends before, during or between asks, the book hears of every
    pair that ended, at its figure, once, by the final ask (a pair ends once in a run)."""
    stand_in = _Book()
    original = spend_gate.workflow
    spend_gate.workflow = SimpleNamespace(  # type: ignore[assignment]
        execute_activity_method=stand_in.execute_activity_method
    )
    try:
        gate = RunSpend("r1")
        ended: dict[str, int] = {}
        during: list[PairDone] = []
        for n, (kind, cost, while_asking) in enumerate(steps):
            if kind == "end":
                done = _ended(f"t{n}", float(cost))
                ended[done.task_id] = micros(done.cost_usd)
                if while_asking:
                    during.append(done)
                else:
                    gate.pair_ended(PLAN, done)
                continue
            pending = list(during)
            during.clear()
            stand_in.during = lambda p=pending: [gate.pair_ended(PLAN, d) for d in p]  # type: ignore[misc]
            asyncio.run(gate.afford(PLAN, [_task(9)], running=1))
        for done in during:
            gate.pair_ended(PLAN, done)
        asyncio.run(gate.afford(PLAN, [_task(9)], running=1))  # the final ask
    finally:
        spend_gate.workflow = original  # type: ignore[assignment]
    told: dict[str, int] = {}
    for data in stand_in.asks:
        for task, amount in data.ask.ended.items():
            told[task] = max(told.get(task, 0), amount)
    assert told == ended
    tells = [task for data in stand_in.asks for task in data.ask.ended]
    assert sorted(tells) == sorted(ended), "each pair is told once"
    assert gate.ended == {}, "nothing is left untold after the final ask"
