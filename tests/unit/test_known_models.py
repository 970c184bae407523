"""A model id the agent's provider does not have is refused at plan time, with the closest.

A typo (``claude-sonet-4-5``, ``claude-sonnet-4.5``) or another provider's model
(``gpt-5`` for claude-code) would otherwise be approved and fail every attempt. Ids the
built-in list lacks are accepted from the team's ``$DURABENCH_HOME/models.txt`` or with
``DURABENCH_ALLOW_UNKNOWN_MODEL=true`` (``--allow-unknown-model``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.agents.llm_ids import ALLOW_UNKNOWN_MODEL_ENV, check_known_model
from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.planning.plan import check_request
from durabench.settings.values import Settings


def _request(agent: str, model: str) -> RunRequest:
    return RunRequest(run_id="r", suite="x", agent=AgentSpec(name=agent, model=model))


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("claude-sonet-4-5", "did you mean claude-sonnet-4-5?"),
        ("claude-sonnet-4.5", "did you mean claude-sonnet-4-5?"),
        ("gpt-5", "gpt-5 is one of openai's; claude-code calls anthropic models"),
    ],
)
def test_a_model_the_agents_provider_lacks_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, said: str
) -> None:
    monkeypatch.delenv(ALLOW_UNKNOWN_MODEL_ENV, raising=False)
    with pytest.raises(ConfigError) as err:
        check_request(_request("claude-code", model), Settings(home=tmp_path), here=False)
    assert said in str(err.value)
    assert "--allow-unknown-model" in str(err.value)
    assert "models.txt" in str(err.value)


def test_known_ids_and_their_snapshots_pass(tmp_path: Path) -> None:
    for agent, model in [
        ("claude-code", "claude-sonnet-4-5"),
        ("claude-code", "claude-sonnet-4-5-20250929"),
        ("codex-cli", "gpt-5-codex"),
        ("gemini-cli", "gemini-2.5-pro"),
    ]:
        check_request(_request(agent, model), Settings(home=tmp_path), here=False)


def test_agents_without_a_model_take_any_name(tmp_path: Path) -> None:
    for agent in ("oracle", "nop", "replay"):
        check_request(_request(agent, "m-1"), Settings(home=tmp_path), here=False)


def test_a_team_registry_or_the_setting_allows_an_unknown_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_UNKNOWN_MODEL_ENV, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(ConfigError):
        check_known_model("claude-team-finetune-1", "anthropic", home)
    (home / "models.txt").write_text("# ours\nclaude-team-finetune-1\n")
    check_known_model("claude-team-finetune-1", "anthropic", home)
    monkeypatch.setenv(ALLOW_UNKNOWN_MODEL_ENV, "true")
    check_known_model("claude-next-9", "anthropic", home)
