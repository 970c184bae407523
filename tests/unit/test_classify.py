"""The classifier against the shared cases and against cases per class and agent.

An infra class needs the gateway's record of the model API's answer (``api``): the shared
cases' transcripts get the record their API gave; alone, none of them is infrastructure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from durabench.agents.transcript import read_events
from durabench.classify import classify, load_table, served_model_matches
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage, TranscriptFormat


def api(status: int, error: str = "", answered: bool = True, **fields: Any) -> dict[str, Any]:
    """Facts with the gateway's record: the last request got ``status`` from the API.

    ``answered``: the model answered earlier requests (else it never spoke).
    """
    ledger = MeteredUsage(
        requests=5,
        tokens=TokenUsage(input=500, output=50 if answered else 0),
        served_models=(fields.pop("served", M),) if answered else (),
        asked_models=(fields.pop("asked", M),),
        rate_limited=int(status == 429),
        last_status=status,
        last_error=error,
        **fields,
    )
    return {"metered": ledger, "model_via_gateway": True}


def _cases(root: Path) -> list[dict[str, Any]]:
    return list(json.loads((root / "classify" / "cases.json").read_text()))


_SHARED_API = {
    "claude-usage-cap-mid-session": (429, "rate_limit_error"),
    "claude-auth-fast-fail": (401, "authentication_error"),
    "claude-rate-limit-429": (429, "rate_limit_error"),
    "claude-connection-refused": (502, "upstream unreachable"),
    "codex-usage-cap": (429, "usage_limit_reached"),
    "gemini-auth": (401, "UNAUTHENTICATED"),
}
"""What the model API answered the shared cases' last request, as the gateway records it."""


def test_every_shared_case(shared_fixtures: Path) -> None:
    root = shared_fixtures / "classify"
    wrong = []
    for case in _cases(shared_fixtures):
        events = read_events((root / case["transcript"]).read_text().splitlines())
        data = ClassifyInput(
            events=tuple(events),
            transcript_format=case["agent"],
            requested_model=case["requested_model"],
            exit_code=case["exit_code"],
            timed_out=case["timed_out"],
            wall_seconds=case["wall_seconds"],
            files_changed=case["files_changed"],
            build_failed=case["build_failed"],
        )
        alone = classify(data)
        if alone.exit_class.startswith("infra_"):  # the transcript is the agent's word
            wrong.append((case["name"], "alone", alone.exit_class, alone.reason))
        status, error = _SHARED_API.get(case["name"], (200, ""))
        facts = api(status, error, asked=case["requested_model"], served=case["requested_model"])
        if "mismatch" in case["name"]:
            facts["metered"] = facts["metered"].model_copy(
                update={"substituted": f"{case['requested_model']}, served claude-3-haiku"}
            )
        if status == 502:
            facts["metered"] = facts["metered"].model_copy(update={"last_refused": error})
        verdict = classify(data.model_copy(update=facts))
        if verdict.exit_class != case["expected_exit_class"]:
            wrong.append((case["name"], "recorded", verdict.exit_class, verdict.reason))
    assert wrong == []


# --- own cases -------------------------------------------------------------------------

M = "claude-sonnet-4-5"


def claude(*events: dict[str, Any], model: str = M) -> list[dict[str, Any]]:
    init = {"type": "system", "subtype": "init", "model": model}
    return [init, *events]


def say(text: str, model: str = M) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"type": "assistant", "message": {"model": model, "content": content}}


def api_error(text: str, camel: bool = False) -> dict[str, Any]:
    flag = "isApiErrorMessage" if camel else "is_api_error_message"
    event = say(text, model="<synthetic>")
    event[flag] = True
    return event


def result(text: str, is_error: bool = False, **extra: Any) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": text, **extra}


def verdict(
    events: list[dict[str, Any]],
    fmt: TranscriptFormat = "claude-code",
    model: str = M,
    **facts: Any,
):  # type: ignore[no-untyped-def]
    base = {"exit_code": 0, "files_changed": 2, "wall_seconds": 100.0}
    data = ClassifyInput(
        events=tuple(events), transcript_format=fmt, requested_model=model, **{**base, **facts}
    )
    return classify(data)


@pytest.mark.parametrize(
    ("events", "facts", "expected"),
    [
        (claude(say("x"), result("Fixed it.")), {}, "completed"),
        (claude(result("Looked around.")), {"files_changed": 0}, "model_no_code"),
        (claude(result("Done.")), {"build_failed": True}, "model_build_failure"),
        (claude(say("working")), {"timed_out": True, "exit_code": 137}, "model_timeout"),
        (claude(api_error("Prompt is too long")), {"exit_code": 1}, "model_context_exhausted"),
        (claude(result("boom", is_error=True)), {"exit_code": 1}, "model_agent_error"),
        (
            claude(result("Credit balance is too low", is_error=True)),
            api(400, "invalid_request_error", answered=False),
            "infra_usage_cap",
        ),
        (
            claude(api_error("API Error: 529 Overloaded", camel=True)),
            {"exit_code": 1, **api(529, "overloaded_error")},
            "infra_other",
        ),
        (
            claude(result("OAuth token has expired", is_error=True)),
            {"exit_code": 1, **api(401)},
            "infra_auth",
        ),
        (
            claude(result("Weekly limit reached ∙ resets Jun 3", is_error=True)),
            api(429, "rate_limit_error"),
            "infra_usage_cap",
        ),
        (  # the same claims with the API's 200 in the record: the model's
            claude(result("Weekly limit reached ∙ resets Jun 3", is_error=True)),
            api(200),
            "model_agent_error",
        ),
        (claude(api_error("API Error: 529 Overloaded")), {"exit_code": 1}, "model_agent_error"),
    ],
)
def test_claude_classes(events: list[dict[str, Any]], facts: dict[str, Any], expected: str) -> None:
    assert verdict(events, **facts).exit_class == expected


def test_success_subtype_with_is_error_is_an_error() -> None:
    v = verdict(claude(result("Request rejected (429)", is_error=True)), exit_code=0, **api(429))
    assert v.exit_class == "infra_rate_limit"


def test_infra_at_the_end_wins_over_a_timeout() -> None:
    v = verdict(
        claude(say("going"), api_error("You've hit your limit · resets 4pm")),
        timed_out=True,
        **api(429),
    )
    assert v.exit_class == "infra_usage_cap"


def test_an_early_transient_error_does_not_taint_a_finished_session() -> None:
    events = claude(
        api_error("API Error: Connection refused"), *[say(f"step {i}") for i in range(8)]
    )
    v = verdict([*events, result("All tests pass.")])
    assert v.exit_class == "completed"


def test_dated_snapshot_is_the_requested_model_and_others_are_not() -> None:
    assert served_model_matches("claude-opus-4-5", "claude-opus-4-5-20251101")
    assert not served_model_matches("claude-opus-4-5", "claude-opus-4-5-mini")
    assert not served_model_matches("claude-opus-4-5-20251101", "claude-opus-4-5")
    v = verdict(claude(result("Done."), model="claude-opus-4-5-20251101"), model="claude-opus-4-5")
    assert (v.exit_class, v.served_model) == ("completed", "claude-opus-4-5-20251101")
    said = verdict(claude(result("Done."), model="claude-haiku-4-5"), model="claude-opus-4-5")
    assert said.exit_class == "completed"  # the transcript's word is no evidence
    recorded = api(200, asked="claude-opus-4-5", substituted="claude-opus-4-5, served c-haiku")
    swapped = verdict(claude(result("Done.")), model="claude-opus-4-5", **recorded)
    assert swapped.exit_class == "infra_other" and "MODEL MISMATCH" in swapped.reason


def test_claude_tokens_and_cost_prefer_model_usage() -> None:
    usage = {"input_tokens": 1, "output_tokens": 1}
    per_model = {
        "a": {"inputTokens": 10, "outputTokens": 5, "cacheReadInputTokens": 7, "costUSD": 0.5},
        "b": {"inputTokens": 1, "outputTokens": 1, "costUSD": 0.25},
    }
    v = verdict(claude(result("Done.", usage=usage, modelUsage=per_model, total_cost_usd=9)))
    assert (v.tokens.input, v.tokens.output, v.tokens.cache_read) == (11, 6, 7)
    assert v.cost_usd == 0.75


def codex(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"}, *events]


def test_codex_tokens_last_message_and_disconnect() -> None:
    done = codex(
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Implemented."}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 9},
        },
    )
    v = verdict(done, fmt="codex-cli", model="gpt-5")
    assert (v.exit_class, v.last_message) == ("completed", "Implemented.")
    assert (v.tokens.input, v.tokens.cache_read, v.tokens.output) == (40, 60, 9)
    assert v.served_model is None
    cut = codex({"type": "error", "message": "stream disconnected before completion"})
    never = api(200, answered=False, asked="gpt-5")  # the stream was cut before any answer
    assert verdict(cut, fmt="codex-cli", model="gpt-5", exit_code=1, **never).exit_class == (
        "infra_other"
    )
    midway = api(200, asked="gpt-5", served="gpt-5")  # after answers: no API failure on record
    assert verdict(cut, fmt="codex-cli", model="gpt-5", exit_code=1, **midway).exit_class == (
        "model_agent_error"
    )


def test_gemini_deltas_stats_and_quota() -> None:
    events = [
        {"type": "init", "model": "gemini-3-pro"},
        {"type": "message", "role": "assistant", "content": "All ", "delta": True},
        {"type": "message", "role": "assistant", "content": "fixed.", "delta": True},
        {"type": "result", "status": "success", "stats": {"input_tokens": 5, "output_tokens": 3}},
    ]
    v = verdict(events, fmt="gemini-cli", model="gemini-3-pro")
    assert (v.exit_class, v.last_message, v.tokens.output) == ("completed", "All fixed.", 3)
    quota = [
        {"type": "init", "model": "gemini-3-pro"},
        {"type": "result", "status": "error", "error": {"message": "RESOURCE_EXHAUSTED"}},
    ]
    recorded = api(429, "RESOURCE_EXHAUSTED", asked="gemini-3-pro", served="gemini-3-pro")
    quota_verdict = verdict(quota, fmt="gemini-cli", model="gemini-3-pro", exit_code=1, **recorded)
    assert quota_verdict.exit_class == "infra_rate_limit"


@pytest.mark.parametrize(
    ("message", "files", "expected"),
    [
        ("All tests pass; fixed the bug.", 2, {"claims_complete"}),
        ("Done!", 0, {"claims_complete", "false_completion"}),
        ("I could not finish the refactor; remaining work: tests.", 1, {"acknowledged_incomplete"}),
        (
            "Shall I continue with the other modules?",
            1,
            {"asked_to_continue", "clarifying_question"},
        ),
        ("Could you clarify which API you mean?", 0, {"clarifying_question"}),
    ],
)
def test_last_message_signals(message: str, files: int, expected: set[str]) -> None:
    signals = verdict(claude(result(message)), files_changed=files).signals
    assert {k for k, v in signals.model_dump().items() if v} == expected


def test_no_transcript_still_classifies_and_records_the_table_version() -> None:
    v = classify(ClassifyInput(exit_code=0, files_changed=0))
    assert v.exit_class == "model_no_code"
    assert v.classifier_version == load_table().version


@pytest.mark.parametrize(
    ("stderr", "exit_code", "expected", "says"),
    [
        ("Error: claude native binary not installed.\n", 1, "infra_other", "no session began"),
        ("You've hit your limit\n", 1, "infra_other", "no session began"),  # no 429: no cooling
        ("sh: 1: claude: not found\n", 127, "infra_other", "claude: not found"),
        ("Error: Invalid API key\n", 1, "infra_auth", "no session began"),
        ("", 1, "infra_other", "nothing on stderr"),
    ],
)
def test_a_cli_that_never_began_a_session_is_infra(
    stderr: str, exit_code: int, expected: str, says: str
) -> None:
    data = ClassifyInput(
        transcript_format="claude-code",
        requested_model=M,
        exit_code=exit_code,
        stderr_tail=stderr,
        model_via_gateway=True,  # and the gateway saw no request
    )
    v = classify(data)
    assert (v.exit_class, says in v.reason) == (expected, True)
    assert v.served_model is None


def test_a_session_that_began_and_crashed_stays_the_model_s() -> None:
    started = claude(say("working"))
    v = verdict(started, exit_code=1, stderr_tail="Error: claude native binary not installed.")
    assert v.exit_class == "model_agent_error"
    assert classify(ClassifyInput(exit_code=1)).exit_class == "model_agent_error"  # no CLI


@pytest.mark.parametrize(
    "text",
    [
        "API Error: Can't reach the API server — check your internet or DNS (EAI_AGAIN)",
        "request to https://api.anthropic.com failed: getaddrinfo ENOTFOUND api.anthropic.com",
        "connect ETIMEDOUT 160.79.104.10:443",
    ],
)
def test_an_unreachable_model_api_is_infra_never_the_model(text: str) -> None:
    # seen with the real Claude Code 2.1.332 in a sandbox with no network; the gateway
    # records the upstream it could not reach
    events = claude(api_error(text), result(text, is_error=True))
    v = verdict(events, exit_code=1, **api(502, last_refused="upstream unreachable"))
    assert v.exit_class == "infra_other", v.reason
    assert verdict(events, exit_code=1).exit_class == "model_agent_error"  # the CLI's word
