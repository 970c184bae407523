"""A run is costed at the price of every model its agent calls, its auxiliary ones too.

Claude Code sends its titles, summaries and Explore subagent to its pinned small model:
those requests are in the attempt's ledger under that model, so a run's prices that held
the requested model alone left every such attempt's cost unknown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.agents.agent_registry import agent_class, known_agents
from durabench.agents.llm_ids import ALLOW_UNKNOWN_MODEL_ENV
from durabench.classify import classify
from durabench.gateway import read_ledger
from durabench.models.agent import AgentSpec
from durabench.models.run import RunPlan, RunRequest
from durabench.models.verdict import ClassifyInput
from durabench.planning.plan import make_plan
from durabench.prices import BUILTIN_PRICES
from durabench.settings.values import Settings
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply

MAIN, SMALL = "claude-sonnet-4-5", "claude-haiku-4-5"
UNKNOWN = "a-model-nobody-prices-9"


def _plan(home: Path, agent: str, model: str) -> RunPlan:
    request = RunRequest(run_id="r", suite="pytorch", agent=AgentSpec(name=agent, model=model))
    return make_plan(request, Settings(home=home))


def _answer(received: Received) -> Reply:
    """Sonnet: 10,000 in, 2,000 out, 40,000 cache read. Haiku: 3,000 in, 500 out."""
    model = received.body["model"]
    usage = (
        {"input_tokens": 10_000, "output_tokens": 2_000, "cache_read_input_tokens": 40_000}
        if model == MAIN
        else {"input_tokens": 3_000, "output_tokens": 500}
    )
    return Reply(body={"type": "message", "model": model, "usage": usage})


async def test_an_attempt_that_used_the_small_model_is_priced(tmp_path: Path) -> None:
    plan = _plan(tmp_path / "home", "claude-code", MAIN)
    async with gateway_rig(tmp_path, _answer) as rig:
        token = rig.grant("anthropic", model=MAIN, auxiliary_models=[SMALL])
        for model in (MAIN, SMALL):
            answer = await rig.send("POST", "/anthropic/v1/messages", token, json={"model": model})
            assert answer.status_code == 200, answer.text
        metered = read_ledger(rig.ledger)
    assert metered is not None
    verdict = classify(
        ClassifyInput(
            requested_model=MAIN,
            files_changed=1,
            metered=metered,
            model_via_gateway=True,
            prices=plan.prices,
        )
    )
    # Sonnet 4.5 ($3 in, $15 out, $0.30 cache read a million): 0.03 + 0.03 + 0.012 = 0.072;
    # Haiku 4.5 ($1 in, $5 out): 0.003 + 0.0025 = 0.0055. In all 0.0775.
    assert verdict.unpriced_model == ""
    assert verdict.cost_usd == pytest.approx(0.0775, rel=1e-9)


def _called(agent: str, model: str) -> tuple[str, ...]:
    return (model, *agent_class(agent).auxiliary_models)


def _priced_or_said(plan: RunPlan, provider: str, model: str) -> bool:
    if plan.prices.price(provider, model) is not None:
        return True
    return any(f"{model} has no price ({provider})" in w for w in plan.warnings)


@pytest.mark.parametrize("agent", known_agents())
def test_every_model_an_agent_may_call_is_priced_or_said_unpriced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    """Main and auxiliary, priced or not, for every agent in the registry."""
    cls = agent_class(agent)
    provider = cls.model_api
    if provider is None:  # calls no model, so it may call no small one either
        assert cls.auxiliary_models == ()
        return
    monkeypatch.setenv(ALLOW_UNKNOWN_MODEL_ENV, "true")
    for model in (*BUILTIN_PRICES[provider], UNKNOWN):
        plan = _plan(tmp_path, agent, model)
        for called in _called(agent, model):
            assert _priced_or_said(plan, provider, called), (agent, model, called)


def test_an_unpriced_auxiliary_model_is_said_in_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_class("claude-code"), "auxiliary_models", (UNKNOWN,))
    plan = _plan(tmp_path, "claude-code", MAIN)
    assert plan.prices.price("anthropic", MAIN) is not None
    (warning,) = [w for w in plan.warnings if "no price" in w]
    assert f"{UNKNOWN} has no price (anthropic)" in warning
    assert "claude-code" in warning and str(tmp_path / "prices.toml") in warning


def test_an_unpriced_run_model_stays_unknown_beside_a_priced_small_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The small model's price in the table does not make the run's model priced: its
    estimate has no price, and an attempt with no traffic is unknown, not $0."""
    monkeypatch.setenv(ALLOW_UNKNOWN_MODEL_ENV, "true")
    plan = _plan(tmp_path, "claude-code", "claude-next-9")
    assert plan.prices.price("anthropic", SMALL) is not None
    verdict = classify(
        ClassifyInput(
            requested_model="claude-next-9",
            files_changed=1,
            model_via_gateway=True,
            prices=plan.prices,
        )
    )
    assert (verdict.cost_usd, verdict.unpriced_model) == (None, "claude-next-9")
