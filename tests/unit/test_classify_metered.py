"""The classifier reads the gateway's meter before it guesses from what the CLI printed."""

from __future__ import annotations

from typing import Any

from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage

MODEL = "claude-haiku-4-5"
INIT = {"type": "system", "subtype": "init", "model": MODEL}


def _result(**usage: int) -> dict[str, Any]:
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Done.",
        "total_cost_usd": 0.0001,
        "usage": {"input_tokens": usage.get("input", 0), "output_tokens": usage.get("output", 0)},
    }


def _input(metered: MeteredUsage | None, **facts: Any) -> ClassifyInput:
    return ClassifyInput(
        events=tuple(facts.pop("events", (INIT, _result(input=10, output=5)))),
        transcript_format="claude-code",
        requested_model=MODEL,
        files_changed=facts.pop("files_changed", 1),
        metered=metered,
        **facts,
    )


def _metered(**fields: Any) -> MeteredUsage:
    base: dict[str, Any] = {
        "requests": 3,
        "tokens": TokenUsage(input=900, output=300),
        "served_models": (MODEL,),
        "asked_models": (MODEL,),
        "last_status": 200,
    }
    return MeteredUsage.model_validate(base | fields)


def test_tokens_and_served_model_come_from_the_meter_and_a_forged_transcript_is_flagged() -> None:
    verdict = classify(_input(_metered()))
    assert verdict.exit_class == "completed"
    assert verdict.tokens == TokenUsage(input=900, output=300)
    assert verdict.served_model == MODEL
    assert "the transcript reports 15 tokens, the gateway metered 1,200" in verdict.reason
    # The cost is the meter's at the run's prices (none given here: unpriced), never the
    # CLI's figure, which is kept beside it (tests/unit/test_attempt_cost.py).
    assert (verdict.cost_usd, verdict.unpriced_model) == (None, MODEL)
    assert verdict.cli_cost_usd == 0.0001


def test_a_session_killed_while_the_api_answered_429_is_a_rate_limit_not_a_timeout() -> None:
    metered = _metered(rate_limited=40, last_status=429, last_retry_after="30")
    verdict = classify(_input(metered, events=(INIT,), timed_out=True, exit_code=137))
    assert verdict.exit_class == "infra_rate_limit"
    assert "429 (40 in all, retry-after 30 s)" in verdict.reason
    # The same 429s behind a session that went on to finish are no reason to retry.
    assert classify(_input(_metered(rate_limited=40))).exit_class == "completed"


def test_a_rate_limit_inside_a_200_stream_at_the_end_is_a_rate_limit() -> None:
    # The Responses API fails a started stream with response.failed, code
    # rate_limit_exceeded: the status was 200 (Codex 0.169 retries it, recorded).
    metered = _metered(last_status=200, last_error="rate_limit_exceeded")
    verdict = classify(_input(metered, events=(INIT,), timed_out=True, exit_code=137))
    assert verdict.exit_class == "infra_rate_limit", verdict.reason
    assert "rate_limit_exceeded" in verdict.reason


def test_overload_auth_and_an_unreachable_api_at_the_end_are_infra() -> None:
    ended = {"events": (INIT,), "exit_code": 1}
    assert classify(_input(_metered(last_status=529), **ended)).exit_class == "infra_other"
    assert classify(_input(_metered(last_status=401), **ended)).exit_class == "infra_auth"
    unreachable = _metered(last_status=502, last_error="upstream unreachable")
    verdict = classify(_input(unreachable, **ended))
    assert verdict.exit_class == "infra_other" and "upstream unreachable" in verdict.reason


def test_a_spent_budget_is_the_models_end() -> None:
    verdict = classify(_input(_metered(budget_spent=True, last_status=400), exit_code=1))
    assert verdict.exit_class == "model_budget"
    assert "budget was spent (1,200 tokens)" in verdict.reason


def test_a_model_the_api_substituted_or_the_agent_never_asked_for_is_a_mismatch() -> None:
    swapped = _metered(substituted=f"{MODEL}, served claude-3-haiku")
    verdict = classify(_input(swapped))
    assert verdict.exit_class == "infra_other" and "MODEL MISMATCH" in verdict.reason
    other = _metered(asked_models=("claude-opus-4-1",), served_models=("claude-opus-4-1",))
    verdict = classify(_input(other))
    assert verdict.exit_class == "infra_other"
    assert "asked the API only for claude-opus-4-1" in verdict.reason
    snapshot = _metered(asked_models=(f"{MODEL}-20251001",))
    assert classify(_input(snapshot)).exit_class == "completed"  # its dated snapshot is fine


def test_without_a_meter_the_transcript_decides_as_before() -> None:
    verdict = classify(_input(None))
    assert verdict.exit_class == "completed"
    assert verdict.tokens == TokenUsage(input=10, output=5) and verdict.metered is None


def test_an_mcp_lane_whose_server_never_answered_through_the_gateway_is_infra() -> None:
    lane = {"mcp_via_gateway": True, "mcp_servers": ("sourcegraph",)}
    never = classify(_input(_metered(mcp_requests=0), **lane))
    assert never.exit_class == "infra_other" and "got no request" in never.reason
    failing = classify(_input(_metered(mcp_requests=3, mcp_answered=0), **lane))
    assert "3 request(s), none answered" in failing.reason
    working = classify(_input(_metered(mcp_requests=3, mcp_answered=2), **lane))
    assert working.exit_class == "completed"
    stdio = classify(_input(_metered(), mcp_servers=("local",)))  # not through the gateway
    assert stdio.exit_class == "completed"


def test_a_session_the_run_s_spend_cap_stopped_is_the_harness_s_never_the_model_s() -> None:
    """The gateway refused a request for the run's spend cap: ``infra_spend_cap``, whether
    the CLI then failed, timed out or claimed success, and it is never scored."""
    metered = _metered(spend_capped=True, last_status=429, last_refused="spend cap")
    for facts in ({"exit_code": 1}, {"timed_out": True, "exit_code": 137}, {}):
        verdict = classify(_input(metered, **facts))
        assert verdict.exit_class == "infra_spend_cap", facts
        assert "spend cap" in verdict.reason
    from durabench.models.verdict import is_infra

    assert is_infra("infra_spend_cap")
