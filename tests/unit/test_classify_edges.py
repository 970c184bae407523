"""The classifier's edge rules, each with the evidence it relies on (mutants killed here).

Each test pins one boundary a small slip would move: the one-line status guard and its
length, the never-began rule's time-limit exception, an error result with exit 0, the
ledger carried on the verdict, and a ledger with no request standing for none.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage

M = "claude-sonnet-4-5"
INIT = {"type": "system", "subtype": "init", "model": M}
CAP = "You've hit your limit · resets 3pm"


def _result(text: str, is_error: bool = False, **extra: Any) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": text, **extra}


def _ledger(status: int = 200, **fields: Any) -> MeteredUsage:
    base: dict[str, Any] = {
        "requests": 6,
        "tokens": TokenUsage(input=600, output=60),
        "served_models": (M,),
        "asked_models": (M,),
        "rate_limited": int(status == 429),
        "last_status": status,
    }
    return MeteredUsage.model_validate(base | fields)


def _classify(*events: dict[str, Any], **facts: Any):  # type: ignore[no-untyped-def]
    base: dict[str, Any] = {"files_changed": 1, "model_via_gateway": True, "metered": _ledger()}
    data = ClassifyInput(
        events=(INIT, *events),
        transcript_format="claude-code",
        requested_model=M,
        **(base | facts),
    )
    return classify(data)


# [ledger + agent's word] A one-line final answer may be a CLI's status line (a cap printed
# as a plain result); a model's summary is longer or multi-line and never a cap claim.


def test_a_multi_line_summary_that_mentions_a_limit_is_no_cap_claim() -> None:
    summary = f"Fixed the limiter.\n{CAP}"
    finished = _classify(_result(summary), metered=_ledger(429))
    assert finished.exit_class == "completed", finished.reason
    one_line = _classify(_result(CAP), metered=_ledger(429))
    assert one_line.exit_class == "infra_usage_cap", one_line.reason


@pytest.mark.parametrize(("length", "claims"), [(300, True), (301, False)])
def test_a_status_line_is_at_most_300_characters(length: int, claims: bool) -> None:
    line = (CAP + " " + "x" * length)[:length]
    verdict = _classify(_result(line), metered=_ledger(429))
    assert (verdict.exit_class == "infra_usage_cap") is claims, verdict.reason
    assert (verdict.exit_class == "completed") is not claims


# [worker + ledger] No request in the ledger: the model never acted. Killed at the time
# limit, though, the CLI hung on its own: that stays the model's timeout.


def test_a_cli_killed_at_its_time_limit_with_no_transcript_and_no_request_is_a_timeout() -> None:
    data = ClassifyInput(
        transcript_format="claude-code",
        requested_model=M,
        exit_code=137,
        timed_out=True,
        wall_seconds=600.0,
        model_via_gateway=True,
    )
    verdict = classify(data)
    assert verdict.exit_class == "model_timeout", verdict.reason
    stopped = classify(data.model_copy(update={"timed_out": False}))
    assert stopped.exit_class == "infra_other", stopped.reason


# [agent] An error result is an error whatever the exit code says.


def test_an_error_result_with_exit_0_is_the_agent_s_error() -> None:
    verdict = _classify(_result("boom", is_error=True), exit_code=0)
    assert verdict.exit_class == "model_agent_error", verdict.reason


def test_an_error_result_with_exit_0_lets_the_api_s_refusal_decide() -> None:
    verdict = _classify(_result("boom", is_error=True), exit_code=0, metered=_ledger(429))
    assert verdict.exit_class == "infra_rate_limit", verdict.reason


# [ledger] The verdict carries the ledger; a ledger with no request is none.


def test_the_verdict_carries_the_ledger_it_was_decided_from() -> None:
    ledger = _ledger()
    verdict = _classify(_result("Done."), metered=ledger)
    assert verdict.metered == ledger
    assert verdict.tokens == ledger.tokens


def test_a_ledger_with_no_request_is_no_meter() -> None:
    usage = {"input_tokens": 10, "output_tokens": 5}
    verdict = _classify(_result("Done.", usage=usage), metered=MeteredUsage(), exit_code=0)
    assert verdict.metered is None
    assert verdict.tokens == TokenUsage(input=10, output=5)  # the transcript's, unchecked
    assert verdict.exit_class == "infra_other"  # and the model never answered
