"""Cost in the reports: lane totals, the paired cost and token difference, per pair.

Plain text lines and table cells, which ``report.md`` and ``report.html`` each escape and
render. A cost that is not known is written ``unpriced``, never ``0.00``.
"""

from __future__ import annotations

from collections.abc import Iterable

from durabench.models.results import AttemptResult
from durabench.models.scorecard import CostComparison, Totals
from durabench.prices import PRICES_FILE, cli_cost_note

__all__ = ["cost_cell", "cost_lines", "cost_table", "usd"]


def usd(value: float, *, signed: bool = False) -> str:
    """``$1.23`` (``+$1.23``/``-$1.23`` when ``signed``); cents of a cent below $0.10."""
    sign = ("+" if value >= 0 else "-") if signed else ("-" if value < 0 else "")
    size = abs(value)
    return f"{sign}${size:.2f}" if round(size, 2) >= 0.1 or size == 0 else f"{sign}${size:.4f}"


def cost_cell(t: Totals) -> str:
    """A lane's cost: its sum, what is unpriced (never counted as 0) and unreported."""
    if t.attempts and t.cost_unpriced == t.attempts:
        return "unpriced"
    text = f"{t.cost_usd:.2f}"
    if t.cost_unpriced:
        text = f"≥ {text} ({t.cost_unpriced} unpriced)"
    return text + (f" ({t.cost_unreported} unreported)" if t.cost_unreported else "")


def _interval(low: float | None, high: float | None, fmt: str) -> str:
    if low is None or high is None:
        return ""
    if fmt == "usd":
        return f"95% CI [{usd(low, signed=True)}, {usd(high, signed=True)}]"
    return f"95% CI [{low:+,.0f}, {high:+,.0f}]"


def cost_lines(c: CostComparison, attempts: Iterable[AttemptResult] = ()) -> list[str]:
    """The paired cost and token difference in a few sentences (``- `` bullets)."""
    boot = f"paired bootstrap over tasks, {c.resamples:,} resamples, seed {c.seed}"
    lines = []
    if c.mean_delta_usd is not None and c.mean_baseline_usd is not None:
        lines.append(
            f"- the {c.full_lane} lane costs {usd(c.mean_delta_usd, signed=True)} per task "
            f"against {c.baseline_lane} ({_interval(c.ci_low_usd, c.ci_high_usd, 'usd')}, "
            f"{boot}; {c.priced_pairs} priced pairs): "
            f"{usd(c.mean_baseline_usd)} → {usd(c.mean_full_usd or 0.0)} per task"
        )
    elif c.tasks:
        lines.append(
            f"- cost difference: unpriced (no compared pair has a price for both arms; add "
            f"the model to {PRICES_FILE} and run `starter report` again)"
        )
    if c.mean_delta_tokens is not None:
        lines.append(
            f"- tokens ({c.full_lane} − {c.baseline_lane}): {c.mean_delta_tokens:+,.0f} per "
            f"task ({_interval(c.ci_low_tokens, c.ci_high_tokens, 'tokens')}, {boot}; "
            f"{len(c.tasks)} pairs)"
        )
    if c.unpriced_pairs and c.priced_pairs:
        lines.append(
            f"- {c.unpriced_pairs} pair(s) left out of the cost difference: an arm is unpriced"
        )
    differ = sum(1 for a in attempts if cli_cost_note(a.cost_usd, a.cli_cost_usd))
    if differ:
        lines.append(
            f"- {differ} attempt(s) whose CLI printed another cost than the meter's (see "
            "their reasons): the gateway's metered tokens are the cost of record"
        )
    return lines


def cost_table(c: CostComparison) -> tuple[list[str], list[list[str]]]:
    """The per-pair cost table, header and rows as plain text."""
    header = [
        "task",
        f"{c.baseline_lane} (USD)",
        f"{c.full_lane} (USD)",
        "difference (USD)",
        "difference (tokens)",
    ]

    def money(value: float | None, signed: bool = False) -> str:
        return "unpriced" if value is None else usd(value, signed=signed)

    rows = [
        [
            t.task_id,
            money(t.baseline_usd),
            money(t.full_usd),
            money(t.delta_usd, signed=True),
            f"{t.delta_tokens:+,.0f}",
        ]
        for t in c.tasks
    ]
    return header, rows
