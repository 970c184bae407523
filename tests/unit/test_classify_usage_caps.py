"""Usage-cap messages are usage caps when the model API refused with a 429, however the CLI
carries them, and the model's when it did not.

Five-hour, session, weekly and per-model limits, with a reset time of day, a date and zone,
an epoch or none; in a synthetic API-error turn with or without a 429, or in the final
result whatever its subtype says: with the API's 429 in the gateway's ledger every one is
``infra_usage_cap``, never ``infra_rate_limit`` and never the model's error. Without it
(the agent wrote the message, the API refused nothing) none is infrastructure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from durabench.agents.transcript import read_events
from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage, TranscriptFormat

M = "claude-sonnet-4-5"
REFUSED = MeteredUsage(
    requests=9,
    tokens=TokenUsage(input=4000, output=900),
    served_models=(M,),
    asked_models=(M,),
    rate_limited=1,
    last_status=429,
    last_error="rate_limit_error",
)
"""The gateway's record of a session whose last request the API refused with 429."""

MESSAGES = [
    "You've hit your limit · resets 3pm (Europe/Lisbon)",
    "5-hour limit reached ∙ resets 3pm",
    "Five-hour limit reached · resets 5:30pm (UTC)",
    "Session limit reached ∙ resets 11pm",
    "You've hit your session limit · resets 11pm (UTC)",
    "Weekly limit reached ∙ resets Jun 3 at 4pm (Europe/Berlin)",
    "You've reached your weekly limit · resets Jun 5, 9am (America/New_York)",
    "Opus weekly limit reached ∙ resets Jun 5 at 4pm (UTC)",
    "You've reached your Opus limit · resets 9pm (UTC)",
    "Sonnet 4.5 limit reached · resets Jun 4, 2am (UTC)",
    "Claude AI usage limit reached|1748966400",
    "Claude usage limit reached. Your limit will reset at 3pm (America/Bogota).",
    "You're out of extra usage · resets 3pm (UTC)",
    "You've hit your limit",
]
"""Usage-cap messages in the forms Claude Code printed them over its versions."""


def init() -> dict[str, Any]:
    return {"type": "system", "subtype": "init", "model": M, "mcp_servers": []}


def synthetic(text: str, status: int | None) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    event: dict[str, Any] = {
        "type": "assistant",
        "message": {"model": "<synthetic>", "content": content},
        "is_api_error_message": True,
    }
    if status is not None:
        event |= {"error": "rate_limit", "api_error_status": status}
    return event


def result(text: str, subtype: str, is_error: bool) -> dict[str, Any]:
    return {"type": "result", "subtype": subtype, "is_error": is_error, "result": text}


CARRIERS = {
    "synthetic turn with 429": lambda t: [synthetic(t, 429), result(t, "success", True)],
    "synthetic turn, no status": lambda t: [synthetic(t, None), result(t, "success", True)],
    "result success, not an error": lambda t: [result(t, "success", False)],
    "result error_during_execution": lambda t: [result(t, "error_during_execution", True)],
    "result error_max_turns": lambda t: [result(t, "error_max_turns", True)],
}


def classify_events(
    events: list[dict[str, Any]],
    fmt: TranscriptFormat = "claude-code",
    model: str = M,
    **facts: Any,
) -> tuple[str, str]:
    base = {
        "exit_code": 1,
        "files_changed": 2,
        "wall_seconds": 300.0,
        "metered": REFUSED.model_copy(update={"asked_models": (model,), "served_models": (model,)}),
        "model_via_gateway": True,
    }
    data = ClassifyInput(
        events=tuple(events),
        transcript_format=fmt,
        requested_model=model,
        **{**base, **facts},
    )
    verdict = classify(data)
    return verdict.exit_class, verdict.reason


@pytest.mark.parametrize("carrier", sorted(CARRIERS))
@pytest.mark.parametrize("message", MESSAGES)
def test_every_usage_cap_message_is_a_usage_cap(message: str, carrier: str) -> None:
    for exit_code in (0, 1):
        exit_class, reason = classify_events(
            [init(), *CARRIERS[carrier](message)], exit_code=exit_code
        )
        assert exit_class == "infra_usage_cap", reason
        assert message.split("·")[0].strip()[:20] in reason  # quoted for the reader
        answered = REFUSED.model_copy(update={"last_status": 200, "last_error": ""})
        alone, reason = classify_events(
            [init(), *CARRIERS[carrier](message)], exit_code=exit_code, metered=answered
        )
        assert not alone.startswith("infra"), reason  # the agent's word only


def test_killed_after_a_usage_cap_is_still_the_cap() -> None:
    events = [init(), synthetic(MESSAGES[1], 429)]
    assert classify_events(events, exit_code=137, timed_out=True)[0] == "infra_usage_cap"


@pytest.mark.parametrize(
    "text",
    [
        "Fixed the rate limiter; it now resets its window every minute.",
        "Added a usage limit to the API client and a test for it.",
        "Done: the weekly report job no longer hits the daily limit.",
    ],
)
def test_a_model_s_final_message_about_limits_is_not_a_cap(text: str) -> None:
    finished = REFUSED.model_copy(update={"last_status": 200, "last_error": ""})
    events = [init(), result(text, "success", False)]
    assert classify_events(events, exit_code=0, metered=finished)[0] == "completed"


@pytest.mark.parametrize(
    "message",
    [
        "Request rejected (429) · this may be a temporary capacity issue.",
        "API Error: 429 This request would exceed your account's rate limit. Please try again.",
    ],
)
def test_a_plain_rate_limit_stays_a_rate_limit(message: str) -> None:
    events = [init(), synthetic(message, 429), result(message, "success", True)]
    assert classify_events(events)[0] == "infra_rate_limit"


@pytest.mark.parametrize(
    "message",
    [
        "You've reached your rate limit. Please try again later.",
        "You have reached your maximum context limit for this model.",
    ],
)
def test_reaching_your_rate_or_context_limit_is_no_usage_cap(message: str) -> None:
    events = [init(), synthetic(message, None), result(message, "success", True)]
    assert classify_events(events)[0] != "infra_usage_cap"


def test_gemini_s_daily_quota_is_a_cap_and_its_per_minute_quota_a_rate_limit() -> None:
    def gemini(message: str) -> list[dict[str, Any]]:
        error = {"type": "TerminalQuotaError", "message": message}
        return [
            {"type": "init", "model": "g"},
            {"type": "result", "status": "error", "error": error},
        ]

    daily = gemini("You have exhausted your daily quota on this model.")
    assert classify_events(daily, fmt="gemini-cli", model="g")[0] == "infra_usage_cap"
    minute = gemini("RESOURCE_EXHAUSTED: Quota exceeded for requests per minute.")
    assert classify_events(minute, fmt="gemini-cli", model="g")[0] == "infra_rate_limit"


@pytest.mark.parametrize(
    ("wait", "expected"),
    [("7200s", "infra_usage_cap"), ("300s", "infra_usage_cap"), ("30s", "infra_rate_limit")],
)
def test_gemini_s_quota_error_is_a_cap_when_the_api_says_wait_five_minutes_or_more(
    wait: str, expected: str
) -> None:
    # Gemini CLI 0.61 gives up at once on a quota delay over 300 s, and after its retries
    # on a shorter one; either way it prints the API's message, the delay and its advice.
    message = (
        "[API Error: You exceeded your current quota, please check your plan and billing "
        f"details.\nSuggested retry after {wait}.]\nPlease wait and try again later. To "
        "increase your limits, request a quota increase through AI Studio, or switch to "
        "another /auth method"
    )
    error = {"type": "unknown", "message": message}
    events = [{"type": "init", "model": "g"}, {"type": "result", "status": "error", "error": error}]
    assert classify_events(events, fmt="gemini-cli", model="g")[0] == expected


def test_the_shared_usage_cap_cases_are_caps_only_on_the_api_s_word(
    shared_fixtures: Path,
) -> None:
    root = shared_fixtures / "classify"
    cases = json.loads((root / "cases.json").read_text())
    capped = [c for c in cases if c["expected_exit_class"] == "infra_usage_cap"]
    if not capped:
        pytest.skip("the shared cases have no usage-cap transcript")
    for case in capped:
        events = read_events((root / case["transcript"]).read_text().splitlines())
        exit_class, _ = classify_events(events, fmt=case["agent"], model=case["requested_model"])
        assert exit_class == "infra_usage_cap", case["name"]
        exit_class, _ = classify_events(
            events,
            fmt=case["agent"],
            model=case["requested_model"],
            metered=None,
            model_via_gateway=False,
        )
        assert not exit_class.startswith("infra"), case["name"]
