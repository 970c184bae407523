"""Cost as a result: per lane, per pair, and the paired difference with the reward's CI.

A run worked by hand (lanes baseline and sourcegraph_full, every attempt completed):

| task | baseline                        | full                      | $ diff | token diff |
|------|---------------------------------|---------------------------|--------|------------|
| t1   | $0.40, 1,000 tok                | $0.70, 3,000 tok          | +0.30  | +2,000     |
| t2   | $0.20 (1,000), $0.40 (3,000)    | $0.40, 1,000 tok          | +0.10  | -1,000     |
|      | mean $0.30, 2,000 tok           |                           |        |            |
| t3   | $0.50, 1,000 tok                | unpriced, 6,000 tok       | -      | +5,000     |
| t4   | $0.50, 1,000 tok                | infra_usage_cap $9.00, 0  | pair excluded       |

Cost difference over the 2 priced pairs (t1, t2): mean (0.30 + 0.10) / 2 = +$0.20; with two
differences a resample of both the smaller one has probability 1/4 > 2.5%, so the 95%
interval is [+$0.10, +$0.30]. Per task: baseline (0.40 + 0.30) / 2 = $0.35, full
(0.70 + 0.40) / 2 = $0.55. t3 is left out of it (1 unpriced pair).
Tokens over the 3 compared pairs: (2,000 - 1,000 + 5,000) / 3 = +2,000; a resample of all
one value has probability 1/27 > 2.5%: interval [-1,000, +5,000].
Lane totals (every attempt): baseline 0.40 + 0.20 + 0.40 + 0.50 + 0.50 = $2.00; full
0.70 + 0.40 + 9.00 = $10.10 and 1 unpriced.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.models.agent import AgentSpec
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import RunPlan, RunRequest, TaskRef
from durabench.models.verdict import TokenUsage
from durabench.results.dashboard import entry_of
from durabench.results.export import pair_rows
from durabench.results.report import render_markdown, summarize_lanes, totals_table
from durabench.results.report_html import render_html
from durabench.results.scoring import compute_scorecard

BASE, FULL = "baseline", "sourcegraph_full"
TASKS = ("t1", "t2", "t3", "t4")


def _a(task: str, lane: str, n: int, usd: float | None, tokens: int, **kw: Any) -> AttemptResult:
    return AttemptResult(
        run_id="cost",
        task_id=task,
        lane=lane,
        attempt=n,
        exit_class=kw.pop("exit_class", "completed"),
        reward=kw.pop("reward", 1.0),
        agent="claude-code",
        model="claude-haiku-4-5",
        tokens=TokenUsage(input=tokens),
        cost_usd=usd,
        **kw,
    )


ATTEMPTS = (
    _a("t1", BASE, 1, 0.40, 1_000),
    _a("t1", FULL, 1, 0.70, 3_000),
    _a("t2", BASE, 1, 0.20, 1_000),
    _a("t2", BASE, 2, 0.40, 3_000),
    _a("t2", FULL, 1, 0.40, 1_000),
    _a("t3", BASE, 1, 0.50, 1_000),
    _a("t3", FULL, 1, None, 6_000, unpriced_model="claude-next"),
    _a("t4", BASE, 1, 0.50, 1_000),
    _a("t4", FULL, 1, 9.00, 0, exit_class="infra_usage_cap", reward=None),
)
EXCLUDED = {"t4": "sourcegraph_full ended infra_usage_cap"}


def _result(attempts: tuple[AttemptResult, ...] = ATTEMPTS) -> RunResult:
    plan = RunPlan(
        request=RunRequest(
            run_id="cost", suite="s", agent=AgentSpec(name="claude-code", model="claude-haiku-4-5")
        ),
        lanes=(BASE, FULL),
        tasks=tuple(TaskRef(task_id=t, task_dir=f"/{t}") for t in TASKS),
        task_count=len(TASKS),
        estimated_agent_hours=1.0,
        results_dir="/tmp/cost",
    )
    card = compute_scorecard(attempts, TASKS, (BASE, FULL), EXCLUDED)
    lanes = summarize_lanes(attempts, (BASE, FULL), EXCLUDED)
    return RunResult(
        plan=plan, approval=None, attempts=attempts, excluded=EXCLUDED, lanes=lanes, scorecard=card
    )


def test_the_cost_difference_is_the_hand_worked_one() -> None:
    card = _result().scorecard
    assert card is not None and card.cost is not None
    c = card.cost
    assert [t.task_id for t in c.tasks] == ["t1", "t2", "t3"]
    assert [t.delta_usd for t in c.tasks] == [pytest.approx(0.30), pytest.approx(0.10), None]
    assert [t.delta_tokens for t in c.tasks] == [2_000, -1_000, 5_000]
    assert (c.priced_pairs, c.unpriced_pairs) == (2, 1)
    assert c.mean_delta_usd == pytest.approx(0.20)
    assert (c.ci_low_usd, c.ci_high_usd) == (pytest.approx(0.10), pytest.approx(0.30))
    assert (c.mean_baseline_usd, c.mean_full_usd) == (pytest.approx(0.35), pytest.approx(0.55))
    assert c.mean_delta_tokens == 2_000
    assert (c.ci_low_tokens, c.ci_high_tokens) == (-1_000, 5_000)
    assert (c.resamples, c.seed) == (card.comparison.resamples, card.comparison.seed)  # type: ignore[union-attr]


def test_lane_totals_count_every_attempt_and_never_price_the_unpriced_at_zero() -> None:
    card = _result().scorecard
    assert card is not None
    _, rows = totals_table(card)
    by_lane = {row[0]: row[-1] for row in rows}
    assert by_lane == {
        BASE: "2.00",
        FULL: "≥ 10.10 (1 unpriced)",
        "all": "≥ 12.10 (1 unpriced)",
    }


def test_both_reports_say_what_the_mcp_lane_costs_per_task() -> None:
    result = _result()
    assert result.scorecard is not None
    said = (
        "the sourcegraph_full lane costs +$0.20 per task against baseline "
        "(95% CI [+$0.10, +$0.30], paired bootstrap over tasks, 10,000 resamples, seed "
    )
    tokens = "tokens (sourcegraph_full − baseline): +2,000 per task (95% CI [-1,000, +5,000]"
    md = render_markdown(result, result.scorecard)
    html = render_html(result, result.scorecard)
    for page in (md, html):
        assert said in page and "2 priced pairs): $0.35 → $0.55 per task" in page
        assert tokens in page
        assert "1 pair(s) left out of the cost difference: an arm is unpriced" in page
    assert "| t1 | $0.40 | $0.70 | +$0.30 | +2,000 |" in md
    assert "| t3 | $0.50 | unpriced | unpriced | +5,000 |" in md
    assert "<td>t3</td><td>$0.50</td><td>unpriced</td><td>unpriced</td><td>+5,000</td>" in html


def test_a_run_with_no_price_says_unpriced_never_zero() -> None:
    unpriced = tuple(
        a.model_copy(update={"cost_usd": None, "unpriced_model": "claude-next"}) for a in ATTEMPTS
    )
    result = _result(unpriced)
    assert result.scorecard is not None
    _, rows = totals_table(result.scorecard)
    assert {row[-1] for row in rows} == {"unpriced"}
    md = render_markdown(result, result.scorecard)
    assert "cost difference: unpriced" in md and "prices.toml" in md
    assert "$0.00" not in md and "| 0.00" not in md


def test_a_cli_cost_that_differs_from_the_meters_is_counted_in_the_report() -> None:
    differs = (ATTEMPTS[0].model_copy(update={"cli_cost_usd": 4.0}), *ATTEMPTS[1:])
    agrees = (ATTEMPTS[0].model_copy(update={"cli_cost_usd": 0.401}), *ATTEMPTS[1:])
    note = "1 attempt(s) whose CLI printed another cost than the meter's"
    for attempts, named in ((differs, True), (agrees, False)):
        result = _result(attempts)
        assert result.scorecard is not None
        assert (note in render_markdown(result, result.scorecard)) is named


def test_the_dashboard_entry_publishes_the_cost_difference_and_the_unpriced() -> None:
    entry = entry_of(_result())
    assert entry.cost_usd == pytest.approx(12.10)  # priced attempts only
    assert entry.cost_unpriced == 1
    assert entry.cost_delta_usd == pytest.approx(0.20)
    assert entry.cost_ci == (pytest.approx(0.10), pytest.approx(0.30))


def test_a_pair_row_exports_the_cost_and_token_difference() -> None:
    rows = {r["task_id"]: r for r in pair_rows(_result())}
    assert rows["t1"]["cost_delta_usd"] == pytest.approx(0.30)
    assert rows["t1"]["token_delta"] == 2_000
    assert (rows["t3"]["cost_delta_usd"], rows["t3"]["token_delta"]) == (None, 5_000)
    assert (rows["t4"]["cost_delta_usd"], rows["t4"]["token_delta"]) == (None, None)  # excluded


def test_the_terminal_report_says_the_cost_difference_and_the_unpriced() -> None:
    from rich.console import Console

    from starter.console import result_tables

    out = Console(width=200, record=True, color_system=None)
    for part in result_tables(_result()):
        out.print(part)
    text = out.export_text()
    assert "the sourcegraph_full lane costs +$0.20 per task against baseline" in text
    assert "≥ 10.10 (1 unpriced)" in text
