"""The plan records the price its run is costed at, and says when the model has none."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from durabench.agents.llm_ids import ALLOW_UNKNOWN_MODEL_ENV
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.planning.plan import make_plan
from durabench.prices import SOURCES
from durabench.settings.values import Settings


def _request(agent: str, model: str) -> RunRequest:
    return RunRequest(run_id="r", suite="pytorch", agent=AgentSpec(name=agent, model=model))


def test_the_plan_records_the_published_price_of_its_model(tmp_path: Path) -> None:
    plan = make_plan(_request("claude-code", "claude-haiku-4-5"), Settings(home=tmp_path))
    price = plan.prices.price("anthropic", "claude-haiku-4-5")
    assert price is not None
    assert (price.input, price.output, price.cache_read, price.cache_write) == (
        1.0,
        5.0,
        0.1,
        1.25,
    )
    assert list(plan.prices.prices) == ["anthropic"]  # only the models the run calls
    assert list(plan.prices.prices["anthropic"]) == ["claude-haiku-4-5"]
    assert not any("no price" in w or "unverified" in w for w in plan.warnings)


def test_the_homes_prices_file_is_what_the_run_records(tmp_path: Path) -> None:
    (tmp_path / "prices.toml").write_text(
        '[openai."gpt-5-codex"]\ninput = 1.0\noutput = 8.0\ncache_read = 0.1\n'
        'cache_write = 0.0\nsource = "our contract"\nas_of = 2026-10-01\n'
    )
    plan = make_plan(_request("codex-cli", "gpt-5-codex"), Settings(home=tmp_path))
    price = plan.prices.price("openai", "gpt-5-codex")
    assert price is not None
    assert (price.output, price.source, price.as_of) == (8.0, "our contract", date(2026, 10, 1))


def test_an_unpriced_model_is_said_in_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_UNKNOWN_MODEL_ENV, "true")
    plan = make_plan(_request("claude-code", "claude-next-9"), Settings(home=tmp_path))
    assert plan.prices.priced("claude-next-9") is None
    (warning,) = [w for w in plan.warnings if "no price" in w]
    assert "claude-next-9 has no price (anthropic)" in warning
    assert "reported as unpriced, never as 0" in warning
    assert str(tmp_path / "prices.toml") in warning


def test_an_agent_without_a_model_api_records_no_price_and_no_warning(tmp_path: Path) -> None:
    plan = make_plan(_request("oracle", "none"), Settings(home=tmp_path))
    assert plan.prices.prices == {}
    assert not any("no price" in w for w in plan.warnings)


def test_an_unverified_builtin_price_is_said_in_the_plan(tmp_path: Path) -> None:
    plan = make_plan(_request("codex-cli", "gpt-5-codex-mini"), Settings(home=tmp_path))
    assert plan.prices.price("openai", "gpt-5-codex-mini") is not None  # costed, but
    (warning,) = [w for w in plan.warnings if "unverified" in w]
    assert "gpt-5-codex-mini" in warning
    assert SOURCES["openai"] in warning  # where to check it
    assert str(tmp_path / "prices.toml") in warning  # where to write what was found


def test_a_price_the_team_sets_is_not_called_unverified(tmp_path: Path) -> None:
    (tmp_path / "prices.toml").write_text(
        '[openai."gpt-5-codex-mini"]\ninput = 0.25\noutput = 2.0\ncache_read = 0.025\n'
        'cache_write = 0.0\nsource = "our contract"\nas_of = 2026-10-01\n'
    )
    plan = make_plan(_request("codex-cli", "gpt-5-codex-mini"), Settings(home=tmp_path))
    assert not any("unverified" in w for w in plan.warnings)
