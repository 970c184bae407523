"""A lane whose agent calls no model says so; it never shows a cost of 0.00 "unreported".

The oracle and nop agents call no model: their attempts report no cost and no tokens,
which is the truth, not a gap. An agent that calls a model and reported no cost is still
counted unreported.
"""

from __future__ import annotations

from durabench.models.results import TokenUsage
from durabench.results.report import totals_table
from durabench.results.scoring import compute_scorecard
from tests.unit.results_set import attempt

NONE = TokenUsage()


def _cost_column(*attempts_of_lane: tuple[str, float | None]) -> list[str]:
    attempts = [
        attempt("t1", "baseline", n, "completed", 1.0, cost_usd=cost, tokens=NONE).model_copy(
            update={"agent": agent}
        )
        for n, (agent, cost) in enumerate(attempts_of_lane, start=1)
    ]
    card = compute_scorecard(attempts, ("t1",), ("baseline",), {})
    return [row[-1] for row in totals_table(card)[1]]


def test_the_oracle_lane_says_no_model_calls() -> None:
    assert _cost_column(*[("oracle", None)] * 4) == ["no model calls", "no model calls"]


def test_an_agent_that_calls_a_model_and_reported_no_cost_is_unreported() -> None:
    """2 claude-code attempts, one $0.25, one no cost: 0.25 (1 unreported)."""
    got = _cost_column(("claude-code", 0.25), ("claude-code", None))
    assert got == ["0.25 (1 unreported)"] * 2
