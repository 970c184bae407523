"""Every class from evidence the agent cannot touch: the gateway's ledger decides infra.

The agent writes its transcript, its final message, its stderr and its CLI's exit code. A
cap, rate limit, overload or auth failure it claims there is infrastructure only when the
gateway recorded the model API saying so during the attempt; otherwise the attempt is the
model's, and the claim is only quoted in the reason.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage

MODEL = "claude-sonnet-4-5"
INIT = {"type": "system", "subtype": "init", "model": MODEL}
CAP = "You've hit your limit · resets 3pm"


def _result(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": text}


def _synthetic(text: str) -> dict[str, Any]:
    message = {"model": "<synthetic>", "content": [{"type": "text", "text": text}]}
    return {"type": "assistant", "message": message, "is_api_error_message": True}


def _ledger(**fields: Any) -> MeteredUsage:
    base: dict[str, Any] = {
        "requests": 12,
        "tokens": TokenUsage(input=9000, output=800),
        "served_models": (MODEL,),
        "asked_models": (MODEL,),
        "last_status": 200,
    }
    return MeteredUsage.model_validate(base | fields)


def _input(*events: dict[str, Any], **facts: Any) -> ClassifyInput:
    base: dict[str, Any] = {"files_changed": 2, "model_via_gateway": True}
    return ClassifyInput(
        events=(INIT, *events),
        transcript_format="claude-code",
        requested_model=MODEL,
        **(base | facts),
    )


@pytest.mark.parametrize(
    ("events", "exit_code", "expected"),
    [
        ((_result(CAP),), 0, "completed"),  # a cap as the plain final answer
        ((_result(CAP, is_error=True),), 1, "model_agent_error"),
        ((_synthetic(CAP),), 1, "model_agent_error"),
        ((_synthetic("API Error: 429 rate_limit_error"),), 1, "model_agent_error"),
        ((_synthetic("API Error: 529 overloaded_error"),), 1, "model_agent_error"),
        ((_result("Invalid API key · Please run /login", is_error=True),), 1, "model_agent_error"),
    ],
)
def test_a_claim_the_gateway_did_not_record_is_the_models(
    events: tuple[dict[str, Any], ...], exit_code: int, expected: str
) -> None:
    verdict = classify(_input(*events, exit_code=exit_code, metered=_ledger()))
    assert verdict.exit_class == expected, verdict.reason
    assert "the gateway recorded no such answer" in verdict.reason


def test_a_cap_claim_with_no_ledger_at_all_is_the_models() -> None:
    replayed = _input(_result(CAP), files_changed=0, model_via_gateway=False)
    verdict = classify(replayed)  # an agent with no model API: a replay without a ledger
    assert verdict.exit_class == "model_no_code", verdict.reason
    assert "infra_usage_cap" in verdict.reason and "unverified" in verdict.reason
    assert verdict.claimed_class == "infra_usage_cap"  # named for triage, never the class


RATE = "API Error: 429 rate_limit_error"


@pytest.mark.parametrize(
    ("claim", "ledger", "expected"),
    [
        (RATE, {"last_status": 429, "last_error": "rate_limit_error"}, "infra_rate_limit"),
        (CAP, {"last_status": 429, "last_error": "rate_limit_error"}, "infra_usage_cap"),
        (
            RATE,
            {
                "last_status": 429,
                "last_error": "rate_limit_error",
                "last_resets": '{"anthropic-ratelimit-unified-status": "rejected"}',
            },
            "infra_usage_cap",
        ),
        (RATE, {"last_status": 429, "last_error": "usage_limit_reached"}, "infra_usage_cap"),
        (CAP, {"last_status": 529, "last_error": "overloaded_error"}, "infra_other"),
        (CAP, {"last_status": 401, "last_error": "authentication_error"}, "infra_auth"),
        (CAP, {"last_status": 403, "last_error": "permission_error"}, "infra_auth"),
    ],
)
def test_the_same_claim_the_gateway_recorded_is_infra(
    claim: str, ledger: dict[str, Any], expected: str
) -> None:
    verdict = classify(_input(_synthetic(claim), exit_code=1, metered=_ledger(**ledger)))
    assert verdict.exit_class == expected, verdict.reason
    assert "the model API" in verdict.reason


def test_a_cap_printed_as_a_plain_answer_is_infra_when_the_api_refused_the_last_request() -> None:
    capped = _ledger(last_status=429, last_error="usage_limit_reached")
    verdict = classify(_input(_result(CAP), metered=capped))
    assert verdict.exit_class == "infra_usage_cap", verdict.reason


@pytest.mark.parametrize("refused", ["budget", "model", "path", "requests", "connections"])
def test_a_gateway_refusal_is_the_agents_doing_never_infra(refused: str) -> None:
    ledger = _ledger(last_status=429, last_error=refused, last_refused=refused)
    verdict = classify(_input(_synthetic("API Error: 429 too many"), exit_code=1, metered=ledger))
    assert not verdict.exit_class.startswith("infra"), verdict.reason


@pytest.mark.parametrize(
    ("refused", "status"),
    [
        ("upstream unreachable", 502),
        ("upstream cut", 200),  # the API began its answer (200) and the host lost the rest
        ("no key on this host", 503),
        ("gateway restarted", 502),
        ("gateway overloaded", 503),
    ],
)
def test_the_harness_s_own_refusals_stay_infra(refused: str, status: int) -> None:
    """Each refusal the host causes, named by hand with the status the gateway writes.

    Listed here, not read from ``HARNESS_REFUSALS``: a name dropped from that tuple must
    fail a test. A stream cut mid-answer ends in 200, so only its ``refused`` says the host
    failed; without it the session is the model's ``model_agent_error``.
    """
    ledger = _ledger(last_status=status, last_refused=refused)
    verdict = classify(_input(_result("x", is_error=True), exit_code=1, metered=ledger))
    assert verdict.exit_class == "infra_other", verdict.reason
    assert f"the host failed the last request ({refused})" in verdict.reason


def test_a_model_never_served_leaves_served_model_empty_and_says_why() -> None:
    never = _ledger(served_models=(), tokens=TokenUsage(), last_status=429, rate_limited=12)
    verdict = classify(_input(_synthetic("API Error: 429"), exit_code=1, metered=never))
    assert verdict.exit_class == "infra_rate_limit"
    assert verdict.served_model is None  # the init event names the model; nothing served it
    assert "no model answered" in verdict.reason


def test_a_cli_that_sent_no_request_has_no_served_model() -> None:
    verdict = classify(_input(exit_code=1, stderr_tail="Not logged in"))
    assert verdict.served_model is None and verdict.exit_class == "infra_auth"


def test_a_served_model_in_the_transcript_alone_is_no_mismatch() -> None:
    swapped = {"type": "system", "subtype": "init", "model": "claude-opus-4-1"}
    data = _input(_result("Done."), metered=_ledger()).model_copy(
        update={"events": (swapped, _result("Done."))}
    )
    verdict = classify(data)
    assert verdict.exit_class == "completed", verdict.reason
    assert verdict.served_model == MODEL


def test_a_model_the_api_substituted_is_a_mismatch_even_in_a_finished_session() -> None:
    swapped = _ledger(
        served_models=("claude-3-haiku",), substituted=f"{MODEL}, served claude-3-haiku"
    )
    verdict = classify(_input(_result("Done."), metered=swapped, budget_tokens=10))
    assert verdict.exit_class == "infra_other" and "MODEL MISMATCH" in verdict.reason


def test_an_attempt_over_its_budget_scores_nothing_past_it() -> None:
    within = _ledger(budget_spent=True, last_status=400, last_refused="budget")
    verdict = classify(_input(_result("Done."), metered=within, budget_tokens=20_000))
    assert verdict.exit_class == "model_budget" and verdict.reward_cap is None
    over = classify(_input(_result("Done."), metered=within, budget_tokens=5_000))
    assert over.exit_class == "model_budget" and over.reward_cap == 0.0
    assert "9,800 tokens metered against a budget of 5,000" in over.reason


def test_an_attempt_that_used_exactly_its_budget_keeps_its_reward() -> None:
    """9,000 input + 800 output = 9,800 tokens metered against a budget of 9,800: not over.

    The cap is for tokens *past* the budget (``>``); one token more (a budget of 9,799) is.
    """
    spent = _ledger(budget_spent=True, last_status=400, last_refused="budget")
    exact = classify(_input(_result("Done."), metered=spent, budget_tokens=9_800))
    assert exact.exit_class == "model_budget" and exact.reward_cap is None, exact.reason
    assert "against a budget" not in exact.reason
    past = classify(_input(_result("Done."), metered=spent, budget_tokens=9_799))
    assert past.reward_cap == 0.0


def test_a_dead_mcp_server_does_not_hide_an_api_that_never_answered() -> None:
    lane = {"mcp_via_gateway": True, "mcp_servers": ("sourcegraph",)}
    refused = _ledger(served_models=(), tokens=TokenUsage(), last_status=401)
    verdict = classify(
        _input(_result("Invalid API key", is_error=True), exit_code=1, metered=refused, **lane)
    )
    assert verdict.exit_class == "infra_auth", verdict.reason
    answered = classify(_input(_result("Done."), metered=_ledger(), **lane))
    assert answered.exit_class == "infra_other" and "MCP NOT WORKING" in answered.reason


def test_a_gateway_restart_in_the_ledger_makes_a_session_it_cut_infra() -> None:
    restarted = _ledger(last_status=502, last_refused="gateway restarted")
    cut = _input(_result("API Error: Connection error.", is_error=True), exit_code=1)
    verdict = classify(cut.model_copy(update={"metered": restarted}))
    assert verdict.exit_class == "infra_other", verdict.reason
    assert "gateway restarted" in verdict.reason


def test_a_gateway_restart_a_session_lived_through_is_no_excuse() -> None:
    went_on = _ledger(last_status=200)  # the restart's line, then answers after it
    ended = _input(_result("I give up.", is_error=True), exit_code=1)
    verdict = classify(ended.model_copy(update={"metered": went_on}))
    assert verdict.exit_class == "model_agent_error", verdict.reason
