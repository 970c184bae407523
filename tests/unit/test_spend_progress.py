"""Cost while a run goes: spent so far and the projection at the current rate, everywhere.

Worked by hand: 3 of 10 pairs done for $4.50 is $1.50 a pair, so $15.00 for all 10.
"""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console

from durabench.models.suite_run import ProgressOutput
from durabench.spend import SpendProgress
from durabench.spend.projection import spend_line
from starter.console import progress_line
from starter.live import progress_view
from starter.progress_lines import ProgressLines
from workflows.run_details import current_details

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _progress(done: int, spent: float, cap: float | None = None, **more: object) -> ProgressOutput:
    return ProgressOutput.model_validate(
        {
            "run_id": "r1",
            "phase": "running",
            "total": 10,
            "done": done,
            "spend": SpendProgress(spent_usd=spent, cap_usd=cap, **more),  # type: ignore[arg-type]
        }
    )


def test_the_line_says_what_was_spent_and_where_the_rate_leads() -> None:
    assert spend_line(_progress(3, 4.5).spend, 3, 10) == (
        "spent $4.50 so far; at this rate $15.00 for all 10 pairs"
    )
    assert spend_line(_progress(3, 4.5, 12.0).spend, 3, 10) == (
        "spent $4.50 so far; at this rate $15.00 for all 10 pairs (cap $12.00)"
    )
    stopped = SpendProgress(spent_usd=11.0, cap_usd=12.0, stopped=True)
    assert spend_line(stopped, 7, 10).endswith("the spend cap is reached: no pair starts")


def test_nothing_is_said_before_anything_is_spent_or_capped() -> None:
    assert spend_line(SpendProgress(), 0, 10) is None
    assert spend_line(SpendProgress(cap_usd=5.0), 0, 10) == "spent $0.00 so far (cap $5.00)"


def test_the_terminal_the_log_the_web_ui_and_status_all_show_it() -> None:
    p = _progress(3, 4.5, 12.0)
    said = "at this rate $15.00 for all 10 pairs (cap $12.00)"
    assert said in progress_line(p)
    assert said in current_details(p, None)
    console = Console(width=200, record=True)
    console.print(progress_view(p, [], NOW))
    assert said in console.export_text()
    lines = ProgressLines()
    lines.lines(_progress(2, 3.0, 12.0), [], NOW)
    assert any(said in line for line in lines.lines(p, [], NOW))


def test_the_book_shows_its_cap_spending_and_holdings_in_the_web_ui() -> None:
    """Cap $10; host a holds $3 and spent $1 on t1 (running, expected $4): $4 committed."""
    from durabench.spend import HostReport, PairAsk, SpendBook, SpendState
    from durabench.spend.projection import book_details

    book = SpendBook(SpendState(cap=10_000_000, block=1_000_000))
    book.start_pairs(PairAsk(tasks=("t1",), expected=4_000_000))
    book.report(HostReport(host="a", held=3_000_000, spent={"t1": 1_000_000}))
    assert book_details(book) == (
        "**spend cap** $10.00: spent $1.00; held by hosts: a $3.00; pairs running: 1; "
        "left for new pairs: $6.00"
    )
