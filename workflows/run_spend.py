"""RunSpendWorkflow: a capped run's book, the one place every host's spending meets.

Started by the run once its plan is approved (id ``run/<run_id>/spend``), it keeps
:class:`~durabench.spend.SpendBook`: blocks of the cap held by each host's gateway, asked
for and given back by the hosts' workers (the ``report`` update, about one a block, not
one a request), and the pairs the run may start (``start_pairs``). The run closes it
when it reports. It continues as new before its history grows long, carrying the book.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durabench.spend import (
        BlockAnswer,
        HostReport,
        PairAnswer,
        PairAsk,
        SpendBook,
        SpendState,
    )
    from durabench.spend.projection import book_details
    from durabench.spend.wire import CLOSE, REPORT, SNAPSHOT, SPEND_WORKFLOW, START_PAIRS

__all__ = ["MAX_UPDATES", "RunSpendWorkflow"]

MAX_UPDATES = 1_000
"""Updates one workflow run takes before it continues as new (the server refuses 2,000)."""


@workflow.defn(name=SPEND_WORKFLOW)
class RunSpendWorkflow:
    """A run's spend cap across every host; runs until the run closes it."""

    @workflow.init
    def __init__(self, state: SpendState) -> None:
        # Here, not in run: a report may come in the same task as the start.
        self.book = SpendBook(state)
        self.updates = 0
        self.closed = False

    @workflow.run
    async def run(self, state: SpendState) -> SpendState:
        """Wait to be closed; continue as new when long. Returns the book as it ended."""
        await workflow.wait_condition(lambda: self.closed or self._long())
        await workflow.wait_condition(workflow.all_handlers_finished)
        if not self.closed:
            workflow.continue_as_new(self.book.state)
        return self.book.state

    def _long(self) -> bool:
        info = workflow.info()
        return self.updates >= MAX_UPDATES or info.is_continue_as_new_suggested()

    @workflow.update(name=REPORT)
    def report(self, report: HostReport) -> BlockAnswer:
        """A host's holding and spending; a block when it asks and the cap covers it."""
        self.updates += 1
        answer = self.book.report(report)
        self._show()
        return answer

    @workflow.update(name=START_PAIRS)
    def start_pairs(self, ask: PairAsk) -> PairAnswer:
        """Which of the asked pairs may start now (a prefix)."""
        self.updates += 1
        answer = self.book.start_pairs(ask)
        self._show()
        return answer

    def _show(self) -> None:
        """The book in the Web UI's current details: the cap, what is spent and held where."""
        workflow.set_current_details(book_details(self.book))

    @workflow.signal(name=CLOSE)
    def close(self) -> None:
        """The run has ended: the book is final."""
        self.closed = True

    @workflow.query(name=SNAPSHOT)
    def snapshot(self) -> SpendState:
        """The book: the cap, what each host holds and spent, the pairs running."""
        return self.book.state
