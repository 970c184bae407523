"""A run's spending in a line: what it spent so far, and where the current rate leads.

The rate is per pair finished: the run's cost grows by pairs, and a pair's two sessions
are what a plan prices. The projection is what every pair of the plan would cost at that
rate; beside a cap, the cap is named, and once it is reached the line says so.
"""

from __future__ import annotations

from durabench.spend.book import SpendBook, SpendProgress, usd
from durabench.wording import counted

__all__ = ["book_details", "spend_line"]


def spend_line(spend: SpendProgress, done: int, total: int) -> str | None:
    """``spent $4.50 so far; at this rate $15.00 for all 10 pairs (cap $12.00)``.

    ``None`` while nothing is spent and no cap is set: there is nothing to say.
    """
    if not spend.spent_usd and spend.cap_usd is None:
        return None
    said = f"spent ${spend.spent_usd:,.2f} so far"
    if done > 0 and total > 0:
        said += f"; at this rate ${spend.spent_usd / done * total:,.2f} for {_all(total)}"
    if spend.cap_usd is not None:
        said += f" (cap ${spend.cap_usd:,.2f})"
    if spend.stopped:
        said += "; the spend cap is reached: no pair starts"
    return said


def book_details(book: SpendBook) -> str:
    """A run's book in the Web UI: the cap, spent, held per host, the pairs it holds for."""
    state = book.state
    hosts = ", ".join(f"{h} ${usd(n):,.2f}" for h, n in sorted(state.held.items())) or "none"
    return (
        f"**spend cap** ${usd(state.cap):,.2f}: spent ${usd(book.spent()):,.2f}; "
        f"held by hosts: {hosts}; pairs running: {len(state.running)}; "
        f"left for new pairs: ${usd(max(0, state.cap - book.committed())):,.2f}"
    )


def _all(pairs: int) -> str:
    """``all 10 pairs``; ``the 1 pair`` where there is one."""
    return "the 1 pair" if pairs == 1 else f"all {counted(pairs, 'pair')}"
