"""The plan's expected cost: sessions x tokens of a session x the run's price.

Tokens of a session come from earlier runs of the same suite, agent and model in the
runs directory (each metered session that was not the harness's failure): the low end
prices every session at the median of them, the high end at the 90th percentile (nearest
rank). With no earlier session, a stated default (:data:`DEFAULT_LOW`,
:data:`DEFAULT_HIGH`) stands in, and the plan says so. A model with no price is
``unpriced``, never priced as zero.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import ValidationError

from durabench.errors import ConfigError
from durabench.models.cost import CostEstimate
from durabench.models.prices import Price
from durabench.models.results import AttemptResult
from durabench.models.run import RunPlan, RunRequest
from durabench.models.verdict import TokenUsage, is_infra
from durabench.settings.paths import RunPaths
from durabench.wording import counted

__all__ = [
    "DEFAULT_HIGH",
    "DEFAULT_LOW",
    "earlier_sessions",
    "cents_up",
    "estimate_cost",
    "with_cost",
]

DEFAULT_LOW = TokenUsage(input=20_000, output=5_000, cache_read=300_000, cache_write=30_000)
"""A short coding-agent session, when no earlier run says better."""
NO_MODEL = "the agent calls no model"
DEFAULT_HIGH = TokenUsage(input=100_000, output=30_000, cache_read=3_000_000, cache_write=150_000)
"""A long one (tens of turns over a large repository)."""


def earlier_sessions(runs_dir: Path, request: RunRequest) -> list[TokenUsage]:
    """Metered tokens of every earlier session of the suite, agent and model."""
    found: list[TokenUsage] = []
    for plan_file in sorted(runs_dir.glob("*/plan.json")):
        try:
            plan = RunPlan.model_validate_json(plan_file.read_bytes())
        except (OSError, ValidationError):
            continue
        earlier = plan.request
        same = (earlier.suite, earlier.agent.name, earlier.agent.model) == (
            request.suite,
            request.agent.name,
            request.agent.model,
        )
        if not same or earlier.run_id == request.run_id:
            continue
        for path in RunPaths(root=plan_file.parent).attempt_results(None):
            try:
                a = AttemptResult.model_validate_json(path.read_bytes())
            except (OSError, ValidationError):
                continue
            if a.tokens.total > 0 and not is_infra(a.exit_class):
                found.append(a.tokens)
    return found


def _cost(price: Price, tokens: TokenUsage) -> float:
    return price.cost_usd(tokens)


def cents_up(amount: float) -> float:
    """``amount`` rounded up to the cent (a high end is never shown lower than it is)."""
    return math.ceil(round(amount * 100, 6)) / 100


def _rank(costs: list[float], share: float) -> float:
    """The nearest-rank percentile ``share`` of ``costs`` (sorted)."""
    return costs[max(0, math.ceil(share * len(costs)) - 1)]


def estimate_cost(
    sessions: int, price: Price | None, earlier: list[TokenUsage], model: str
) -> CostEstimate:
    """The expected cost of ``sessions`` sessions at ``price``."""
    if earlier:
        basis = f"{counted(len(earlier), 'earlier session')} of this suite, agent and model"
    else:
        basis = (
            f"no earlier session: the default of {DEFAULT_LOW.total:,} to "
            f"{DEFAULT_HIGH.total:,} tokens a session"
        )
    if price is None:
        return CostEstimate(
            sessions=sessions,
            low_usd=None,
            high_usd=None,
            session_high_usd=None,
            basis=f"no price for {model}; add it to prices.toml",
        )
    if earlier:
        costs = sorted(_cost(price, t) for t in earlier)
        low, high = _rank(costs, 0.5), _rank(costs, 0.9)
    else:
        low, high = _cost(price, DEFAULT_LOW), _cost(price, DEFAULT_HIGH)
    return CostEstimate(
        sessions=sessions,
        low_usd=math.floor(round(sessions * low * 100, 6)) / 100,
        high_usd=cents_up(sessions * high),
        session_high_usd=high,
        basis=basis,
    )


def with_cost(plan: RunPlan, runs_dir: Path) -> RunPlan:
    """``plan`` with its expected cost, checked against its spend cap.

    Raises:
        ConfigError: the run has a spend cap and its model no price (a cap cannot be
            kept on tokens nobody can price).
    """
    req = plan.request
    price = plan.prices.priced(req.agent.model)  # the table holds its small model's too
    sessions = plan.task_count * len(plan.lanes)
    if req.agent.model == "none":  # an agent that calls no model (the oracle): no token cost
        free = CostEstimate(
            sessions=sessions, low_usd=0.0, high_usd=0.0, session_high_usd=0.0, basis=NO_MODEL
        )
        return plan.model_copy(update={"cost": free})
    cost = estimate_cost(sessions, price, earlier_sessions(runs_dir, req), req.agent.model)
    warnings = plan.warnings
    if req.max_spend_usd is not None:
        if price is None:
            raise ConfigError(
                f"--max-spend needs a price for {req.agent.model}, and it has none: add it to "
                "prices.toml in the durabench home (see docs/results.md), or run without a cap"
            )
        pair = cents_up(2 * (cost.session_high_usd or 0.0))
        if req.max_spend_usd < pair:
            warnings = (
                *warnings,
                f"the spend cap ${req.max_spend_usd:,.2f} is below one pair's expected "
                f"${pair:,.2f}: no pair may start",
            )
    return plan.model_copy(update={"cost": cost, "warnings": warnings})
