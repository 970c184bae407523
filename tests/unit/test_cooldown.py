"""An account cools from the model API's own answers, within a ceiling; never the agent's text."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from durabench.accounts import account_cooldown
from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
DEFAULT = timedelta(hours=1)
CEILING = timedelta(hours=5)
M = "claude-sonnet-4-5"


def _ledger(**fields: object) -> MeteredUsage:
    base: dict[str, object] = {
        "requests": 4,
        "tokens": TokenUsage(input=100, output=50),
        "served_models": (M,),
        "asked_models": (M,),
        "last_status": 429,
    }
    return MeteredUsage.model_validate(base | fields)


def _cooled(final: str, ledger: MeteredUsage | None) -> datetime | None:
    verdict = classify(
        ClassifyInput(
            events=(
                {"type": "system", "subtype": "init", "model": M},
                {"type": "result", "subtype": "success", "is_error": True, "result": final},
            ),
            transcript_format="claude-code",
            requested_model=M,
            exit_code=1,
            files_changed=1,
            metered=ledger,
            model_via_gateway=True,
        )
    )
    return account_cooldown(verdict.exit_class, ledger, NOW, DEFAULT, CEILING)


def test_a_reset_named_in_the_final_message_never_sets_the_cooldown() -> None:
    said = "You've hit your limit · resets Dec 3 at 4pm"
    assert _cooled(said, _ledger()) == NOW + DEFAULT  # the API's 429 named no time
    assert _cooled(said, _ledger(last_status=200)) is None  # the API refused nothing
    assert _cooled(said, None) is None  # no request went through the gateway at all


def test_the_api_s_reset_header_sets_it_within_the_ceiling() -> None:
    soon = str(int((NOW + timedelta(hours=2)).timestamp()))
    headers = {"anthropic-ratelimit-unified-status": "rejected"}
    capped = _ledger(last_resets=json.dumps(headers | {"anthropic-ratelimit-unified-reset": soon}))
    assert _cooled("You've hit your limit", capped) == NOW + timedelta(hours=2)
    week = str(int((NOW + timedelta(days=7)).timestamp()))
    far = _ledger(last_resets=json.dumps(headers | {"anthropic-ratelimit-unified-reset": week}))
    assert _cooled("API Error: 429", far) == NOW + CEILING


def test_a_rate_limit_cools_only_as_long_as_the_api_said() -> None:
    assert _cooled("API Error: 429", _ledger(last_retry_after="30")) == NOW + timedelta(seconds=30)
    assert _cooled("API Error: 429", _ledger()) is None
    assert account_cooldown("model_agent_error", _ledger(), NOW, DEFAULT, CEILING) is None


def test_now_must_be_aware() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        naive = datetime.fromisoformat("2026-01-01T00:00:00")
        account_cooldown("infra_usage_cap", None, naive, DEFAULT, CEILING)
