"""The spend cap's arithmetic: hosts reserve from blocks, the book grants and takes back.

Hypothesis drives any sequence of requests reserved and settled on several hosts, with the
real purses, the real files, the real broker and the real book in between (the book
answered in memory, an answer sometimes lost on the way back), and answers charged from
nothing up to half again their reservation. Whatever the order: the hosts never spend past
the cap by more than what the API charged beyond the reserved worst cases (nothing, when
the worst case bounds the answer, as it does for a real API), and once nothing is in
flight and no attempt is live, every block is back in the book but what was spent.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.spend import (
    BlockAnswer,
    Held,
    Hold,
    HostReport,
    PairAsk,
    Purse,
    SpendBook,
    SpendFiles,
    SpendState,
    Used,
)
from durabench.spend.broker import Tended, tend
from durabench.spend.purse import WAIT_S

HOSTS = ("host-a", "host-b", "host-c")
RUN = "run-1"

op = st.one_of(
    st.tuples(st.just("reserve"), st.sampled_from(HOSTS), st.integers(1, 400)),
    st.tuples(st.just("settle"), st.integers(0, 30), st.integers(0, 150)),
    st.tuples(st.just("tend"), st.sampled_from(HOSTS), st.booleans()),
)


class _Host:
    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.files = SpendFiles(root / name, RUN)
        self.purse = Purse()
        self.tended = Tended()

    def sync(self) -> None:
        self.purse.held = self.files.held().held
        used = self.files.used()
        self.files.write_used(
            used.model_copy(
                update={
                    "spent": dict(self.purse.spent),
                    "reserved": self.purse.reserved,
                    "seen": self.purse.held,
                }
            )
        )


def _run(ops: list[tuple[object, ...]], root: Path, cap: int, block: int) -> None:
    book = SpendBook(SpendState(cap=cap, block=block))
    hosts = {name: _Host(root, name) for name in HOSTS}
    holds: list[tuple[_Host, Hold]] = []
    over = 0
    lost = [False]

    async def ask(report: HostReport) -> BlockAnswer:
        answer = book.report(report)
        if lost[0] and answer.granted:  # granted, and the answer never arrives
            raise ConnectionError("lost")
        return answer

    async def tend_host(host: _Host, live: bool) -> None:
        host.sync()
        try:
            await tend(host.files, host.name, live, ask, host.tended)
        except ConnectionError:
            pass
        host.sync()

    for i, step in enumerate(ops):
        lost[0] = i % 7 == 3
        if step[0] == "reserve":
            host = hosts[str(step[1])]
            host.sync()
            hold = host.purse.reserve(f"task-{i % 4}", int(str(step[2])))
            if hold is None:  # the gateway says what it wants
                used = host.files.used()
                host.files.write_used(used.model_copy(update={"want": int(str(step[2]))}))
                asyncio.run(tend_host(host, True))
                host.files.write_used(host.files.used().model_copy(update={"want": 0}))
            else:
                holds.append((host, hold))
        elif step[0] == "settle" and holds:
            host, hold = holds.pop(int(str(step[1])) % len(holds))
            charged = hold.amount * int(str(step[2])) // 100
            over += max(0, charged - hold.amount)  # the API charged past the worst case
            host.purse.settle(hold, charged)
        elif step[0] == "tend":
            asyncio.run(tend_host(hosts[str(step[1])], bool(step[2])))
        spent = sum(sum(h.purse.spent.values()) + h.purse.reserved for h in hosts.values())
        assert spent <= cap + over, f"hosts spent and hold {spent} of a cap of {cap}"
    for host, hold in holds:
        host.purse.settle(hold, hold.amount)
    for host in hosts.values():  # the run's attempts are gone: leftovers go back
        asyncio.run(tend_host(host, False))
        asyncio.run(tend_host(host, False))
    spent = sum(sum(h.purse.spent.values()) for h in hosts.values())
    assert spent <= cap + over
    assert book.held() == spent, "every block is back in the book but what was spent"
    assert book.spent() == spent


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(op, max_size=40), cap=st.integers(0, 2_000), block=st.integers(1, 500))
def test_hosts_never_spend_past_the_cap_and_give_back_what_is_left(
    ops: list[tuple[object, ...]], cap: int, block: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _run(ops, tmp_path_factory.mktemp("spend"), cap, block)


def test_a_block_is_granted_whole_and_only_under_the_cap() -> None:
    """Cap 1,000, block 300: a host asking 50 gets 300; at 900 held, one asking 200 gets none."""
    book = SpendBook(SpendState(cap=1_000, block=300))
    assert book.report(HostReport(host="a", held=0, want=50)).held == 300
    assert book.report(HostReport(host="b", held=0, want=600)).held == 600
    refused = book.report(HostReport(host="c", held=0, want=200))
    assert (refused.granted, refused.exhausted) == (0, True)
    assert book.report(HostReport(host="c", held=0, want=100)).held == 100


def test_a_lost_answer_is_given_back_by_the_next_report() -> None:
    """Granted 300 the host never wrote down: its next report (held 0) frees it."""
    book = SpendBook(SpendState(cap=500, block=300))
    book.report(HostReport(host="a", held=0, want=10))
    assert book.held() == 300
    book.report(HostReport(host="a", held=0))
    assert book.held() == 0


def test_a_host_that_spent_past_its_holding_is_counted_at_its_spending() -> None:
    """Reports held 100 but spent 150 (a request took from a block being given back)."""
    book = SpendBook(SpendState(cap=500, block=100))
    book.report(HostReport(host="a", held=100, spent={"t": 150}))
    assert book.held() == 150


def test_a_pair_starts_only_when_its_expectation_fits_beside_every_other() -> None:
    """Cap 1,000, each pair expected at 300.

    Three start (900 committed), the fourth does not. When pair 1 ends having spent 100,
    and pair 2 has spent 400 (past its 300), committed is 100 + 400 + 300 = 800, so one
    more of 300 does not fit (1,100); once pair 2 ends at 400 and pair 3 at 50: 550, and
    one more fits (850).
    """
    book = SpendBook(SpendState(cap=1_000, block=100))
    answer = book.start_pairs(PairAsk(tasks=("t1", "t2", "t3", "t4"), expected=300))
    assert answer.started == ("t1", "t2", "t3")
    book.report(HostReport(host="a", held=600, spent={"t1": 100, "t2": 400}))
    assert book.start_pairs(PairAsk(tasks=("t4",), expected=300, ended={"t1": 100})).started == ()
    book.report(HostReport(host="a", held=600, spent={"t1": 100, "t2": 400, "t3": 50}))
    answer = book.start_pairs(PairAsk(tasks=("t4",), expected=300, ended={"t2": 400, "t3": 50}))
    assert answer.started == ("t4",)
    assert (answer.spent, answer.left) == (550, 150)


def test_a_pair_asked_for_again_keeps_its_place() -> None:
    """The run's answer was lost: asking again for t1 starts it, not a second hold."""
    book = SpendBook(SpendState(cap=500, block=100))
    book.start_pairs(PairAsk(tasks=("t1",), expected=300))
    assert book.start_pairs(PairAsk(tasks=("t1",), expected=300)).started == ("t1",)
    assert book.committed() == 300


def test_an_ended_pair_counts_its_metered_cost_before_its_host_reports_it() -> None:
    """Cap 1,000, pairs expected at 300: t1 ended having cost 600 by its ledgers, and no
    host has reported it yet. Counting 0 for it would start t3 beside t2 (0 + 300 + 300);
    counting its 600 does not (600 + 300 + 300 = 1,200)."""
    book = SpendBook(SpendState(cap=1_000, block=100))
    book.start_pairs(PairAsk(tasks=("t1", "t2"), expected=300))
    answer = book.start_pairs(PairAsk(tasks=("t3",), expected=300, ended={"t1": 600}))
    assert answer.started == () and answer.spent == 600
    book.report(HostReport(host="a", held=700, spent={"t1": 550}))
    assert book.spent_by_task() == {"t1": 600}  # the larger of the two


def test_the_broker_asks_for_a_waiting_request_once_per_block(tmp_path: Path) -> None:
    """A request waits for 50: the broker asks, and writes the 300 granted. Until the
    gateway has read that block, its old want is not asked for again."""
    book = SpendBook(SpendState(cap=1_000, block=300))
    asked: list[HostReport] = []

    async def ask(report: HostReport) -> BlockAnswer:
        asked.append(report)
        return book.report(report)

    files, tended = SpendFiles(tmp_path, RUN), Tended()
    files.write_used(Used(run_id=RUN, want=50, asked=1))
    asyncio.run(tend(files, "a", True, ask, tended))
    assert files.held().held == 300 and [r.want for r in asked] == [50]
    asyncio.run(tend(files, "a", True, ask, tended))  # the gateway has not read it yet
    assert [r.want for r in asked] == [50] and book.held() == 300
    files.write_used(Used(run_id=RUN, want=400, asked=2, seen=300))  # it has, and wants more
    asyncio.run(tend(files, "a", True, ask, tended))
    assert files.held().held == 700 and [r.want for r in asked] == [50, 400]


def test_a_refused_ask_leaves_the_block_as_the_gateway_last_read_it(tmp_path: Path) -> None:
    """The API charged past a reservation: spent 1,200 of a 1,000 block. The book (cap
    1,000) refuses more; the host's block stays 1,000 as written, so the gateway's next
    want is asked for again (a block raised to 1,200 by the refusal would look like a
    grant the gateway has not read, and its want would never be asked for)."""
    book = SpendBook(SpendState(cap=1_000, block=300))

    async def ask(report: HostReport) -> BlockAnswer:
        return book.report(report)

    files, tended = SpendFiles(tmp_path, RUN), Tended()
    files.write_held(Held(run_id=RUN, held=1_000))
    files.write_used(Used(run_id=RUN, spent={"t": 1_200}, want=100, asked=1, seen=1_000))
    asyncio.run(tend(files, "a", True, ask, tended))
    assert (files.held().held, files.held().refused) == (1_000, 1)
    files.write_used(Used(run_id=RUN, spent={"t": 1_200}, want=100, asked=2, seen=1_000))
    asyncio.run(tend(files, "a", True, ask, tended))
    assert files.held().refused == 2, "the second want was asked for, and refused"


def _age_used(files: SpendFiles, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(files.dir / "used.json", (then, then))


def test_a_want_left_by_a_gateway_that_died_waiting_does_not_hold_the_block(
    tmp_path: Path,
) -> None:
    """The gateway asked for 50, the broker wrote the 300 granted, and the gateway died
    before it read it (``seen`` 0). No request waits longer than WAIT_S: once used.json is
    older than that its want is nobody's, and with no attempt left the 300 goes back."""
    book = SpendBook(SpendState(cap=1_000, block=300))

    async def ask(report: HostReport) -> BlockAnswer:
        return book.report(report)

    files, tended = SpendFiles(tmp_path, RUN), Tended()
    files.write_used(Used(run_id=RUN, want=50, asked=1))
    asyncio.run(tend(files, "a", True, ask, tended))
    assert files.held().held == 300 and book.held() == 300
    asyncio.run(tend(files, "a", False, ask, tended))  # the want may still be waiting
    assert book.held() == 300
    _age_used(files, WAIT_S + 1)
    asyncio.run(tend(files, "a", False, ask, tended))
    assert (files.held().held, book.held()) == (0, 0)


@pytest.mark.parametrize("age", [0.0, WAIT_S / 2, WAIT_S + 1, 3600.0])
@pytest.mark.parametrize("seen", [0, 300])
@pytest.mark.parametrize("live", [True, False])
def test_a_host_with_no_attempt_left_gives_back_once_no_request_can_be_waiting(
    tmp_path: Path, age: float, seen: int, live: bool
) -> None:
    """The family: every state a gateway can leave used.json in (a want or none, read the
    block or not, fresh or long stale), with nothing in flight and no attempt left, the
    block goes back once no request can still be waiting; with an attempt live, never."""
    book = SpendBook(SpendState(cap=1_000, block=300))

    async def ask(report: HostReport) -> BlockAnswer:
        return book.report(report)

    for want in (0, 50):
        files, tended = SpendFiles(tmp_path / f"w{want}", RUN), Tended()
        book.report(HostReport(host=f"h{want}", held=300))
        files.write_held(Held(run_id=RUN, held=300))
        files.write_used(Used(run_id=RUN, spent={"t": 20}, want=want, asked=1, seen=seen))
        _age_used(files, age)
        for _ in range(3):
            asyncio.run(tend(files, f"h{want}", live, ask, tended))
        waiting = want > 0 and age <= WAIT_S
        gives_back = not live and not waiting
        if gives_back:
            assert files.held().held == 20, (want, "the unspent 280 went back")
        else:
            assert files.held().held >= 300, (want, "a live or waiting host keeps its block")
        assert book.state.held[f"h{want}"] == files.held().held, "the book knows it"


class _Racing(SpendFiles):
    """The gateway reserves 100 from the old block just as the broker gives it back: its
    hold is written after the broker read used.json, before held.json lands."""

    def write_held(self, held: Held) -> None:
        if held.held < self.held().held and not self.raced:
            self.raced = True
            self.write_used(self.used().model_copy(update={"reserved": 100, "seen": 300}))
        super().write_held(held)

    raced = False


def test_a_block_reserved_from_while_it_is_given_back_is_kept(tmp_path: Path) -> None:
    """Spent 20 of 300, no attempt left: the broker gives 280 back. A request that took
    100 of it meanwhile would go out on a block the book thinks is back; the broker sees
    used.json change, keeps the block, and gives back on a later tick."""
    book = SpendBook(SpendState(cap=1_000, block=300))

    async def ask(report: HostReport) -> BlockAnswer:
        return book.report(report)

    files, tended = _Racing(tmp_path, RUN), Tended()
    book.report(HostReport(host="a", held=300))
    files.write_held(Held(run_id=RUN, held=300))
    files.write_used(Used(run_id=RUN, spent={"t": 20}, seen=300))
    asyncio.run(tend(files, "a", False, ask, tended))
    assert files.held().held == 300 and book.held() == 300, "the hold's block is kept"
    files.write_used(Used(run_id=RUN, spent={"t": 90}, seen=300))  # it settled at 70
    asyncio.run(tend(files, "a", False, ask, tended))
    assert files.held().held == 90 and book.held() == 90
