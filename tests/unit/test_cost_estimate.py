"""The plan's expected cost: sessions x tokens of a session x the price, worked by hand."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.prices import Price, PriceTable
from durabench.models.run import RunPlan, RunRequest
from durabench.models.verdict import TokenUsage
from durabench.planning.cost_estimate import earlier_sessions, estimate_cost, with_cost
from durabench.planning.rows import cost_rows

PRICE = Price(
    input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, source="t", as_of=date(2026, 11, 1)
)


def test_no_earlier_session_prices_the_stated_default() -> None:
    """Default low 20k in, 5k out, 300k cache read, 30k cache write:
    0.06 + 0.075 + 0.09 + 0.1125 = $0.3375 a session; high 100k, 30k, 3M, 150k:
    0.30 + 0.45 + 0.90 + 0.5625 = $2.2125. Ten sessions: $3.375 to $22.125, shown $3.37 to
    $22.13 (the low end rounded down, the high end up)."""
    cost = estimate_cost(10, PRICE, [], "claude-sonnet-4-5")
    assert (cost.low_usd, cost.high_usd) == (3.37, 22.13)
    assert cost.session_high_usd == pytest.approx(2.2125)
    assert "no earlier session" in cost.line() and cost.line().startswith("$3.37 to $22.13")
    assert cost.restated() == "3.37-22.13"


def test_earlier_sessions_give_the_median_and_the_90th_percentile() -> None:
    """Sessions of 1M, 2M, ..., 10M output-free input tokens at $3: $3, $6, ... $30.
    Median (nearest rank, 5th of 10) $15; 90th (9th of 10) $27. Four sessions: $60 to $108."""
    earlier = [TokenUsage(input=n * 1_000_000) for n in range(1, 11)]
    cost = estimate_cost(4, PRICE, earlier, "claude-sonnet-4-5")
    assert (cost.low_usd, cost.high_usd) == (60.0, 108.0)
    assert cost.basis.startswith("10 earlier sessions")


def test_an_unpriced_model_is_said_never_priced_as_zero() -> None:
    cost = estimate_cost(10, None, [TokenUsage(input=5)], "m-new")
    assert cost.low_usd is None and cost.high_usd is None
    assert cost.line().startswith("unpriced") and "m-new" in cost.line()
    assert cost.restated() == "unpriced"


def _plan(cap: float | None, prices: PriceTable, run_id: str = "r2") -> RunPlan:
    request = RunRequest(
        run_id=run_id,
        suite="pytorch",
        agent=AgentSpec(name="claude-code", model="claude-sonnet-4-5"),
        max_spend_usd=cap,
    )
    return RunPlan(
        request=request,
        lanes=("baseline", "sourcegraph_full"),
        tasks=(),
        task_count=3,
        estimated_agent_hours=1.0,
        results_dir="/runs/r2",
        prices=prices,
    )


def test_earlier_runs_of_the_same_suite_agent_and_model_are_read(tmp_path: Path) -> None:
    """One earlier run of the same suite, agent and model with a 1M-input session ($3),
    one of another model (ignored), and an infra attempt (ignored)."""
    table = PriceTable(prices={"anthropic": {"claude-sonnet-4-5": PRICE}})
    for run_id, model in (("r1", "claude-sonnet-4-5"), ("r0", "claude-opus-4-1")):
        plan = _plan(None, table, run_id)
        plan = plan.model_copy(
            update={
                "request": plan.request.model_copy(
                    update={"agent": AgentSpec(name="claude-code", model=model)}
                )
            }
        )
        root = tmp_path / run_id
        root.mkdir()
        (root / "plan.json").write_text(plan.model_dump_json())
        for lane, exit_class in (("baseline", "completed"), ("sourcegraph_full", "infra_other")):
            attempt = root / "tasks" / "t1" / lane / "attempt-1"
            attempt.mkdir(parents=True)
            result = {
                "run_id": run_id,
                "task_id": "t1",
                "lane": lane,
                "attempt": 1,
                "agent": "claude-code",
                "model": model,
                "exit_class": exit_class,
                "tokens": {"input": 1_000_000},
            }
            (attempt / "result.json").write_text(json.dumps(result))
    found = earlier_sessions(tmp_path, _plan(None, table).request)
    assert found == [TokenUsage(input=1_000_000)]
    planned = with_cost(_plan(None, table), tmp_path)
    assert planned.cost is not None
    assert (planned.cost.low_usd, planned.cost.high_usd) == (18.0, 18.0)  # 6 sessions x $3


def test_a_cap_needs_a_price_and_is_shown_beside_the_expected_cost(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--max-spend needs a price for claude-sonnet-4-5"):
        with_cost(_plan(50.0, PriceTable()), tmp_path)
    table = PriceTable(prices={"anthropic": {"claude-sonnet-4-5": PRICE}})
    capped = with_cost(_plan(1.0, table), tmp_path)
    assert any("below one pair's expected $4.43" in w for w in capped.warnings)
    rows = {r.key: r.value for r in cost_rows(capped.summary())}
    assert rows["expected cost"].startswith("$2.02 to $13.28")
    assert rows["spend cap"] == "$1.00 over every host"
    assert {r.key: r.alert for r in cost_rows(_plan(None, PriceTable()).summary())} == {
        "spend cap": False
    }


def test_an_agent_that_calls_no_model_costs_nothing_and_is_not_unpriced(tmp_path: Path) -> None:
    """The oracle's plan (model ``none``): $0.00 to $0.00, no alert."""
    plan = _plan(None, PriceTable())
    plan = plan.model_copy(
        update={"request": plan.request.model_copy(update={"agent": AgentSpec(name="oracle")})}
    )
    cost = with_cost(plan, tmp_path).cost
    assert cost is not None and cost.line() == "$0.00 to $0.00 (the agent calls no model)"
    assert not any(r.alert for r in cost_rows(with_cost(plan, tmp_path).summary()))


def test_the_estimate_is_at_the_runs_model_price_not_its_small_models(tmp_path: Path) -> None:
    """The run's table holds the auxiliary model's price too, whichever comes first."""
    small = PRICE.model_copy(update={"input": 0.01, "output": 0.01})
    both = PriceTable(prices={"anthropic": {"claude-haiku-4-5": small, "claude-sonnet-4-5": PRICE}})
    alone = PriceTable(prices={"anthropic": {"claude-sonnet-4-5": PRICE}})
    assert (
        with_cost(_plan(None, both), tmp_path).cost == with_cost(_plan(None, alone), tmp_path).cost
    )
    only_small = PriceTable(prices={"anthropic": {"claude-haiku-4-5": small}})
    with pytest.raises(ConfigError, match="--max-spend needs a price for claude-sonnet-4-5"):
        with_cost(_plan(50.0, only_small), tmp_path)
