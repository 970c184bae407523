"""A session that ends while its CLI retries the model API is infra when the API refused.

Claude Code prints a ``system``/``api_retry`` event before each retry of a failed request
(seen with the real CLI against an upstream answering 429 with ``retry-after: 30``). Killed
by the time limit in the middle of those retries, the attempt measured the provider: the
gateway's ledger shows the API's refusal, and the retry the CLI printed names it in the
reason. The printed retry alone is the agent's word: the model's class, with the claim.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.classify import classify, parse_transcript
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage

M = "claude-sonnet-4-5"


def ledger(status: int, model: str = M, **fields: Any) -> MeteredUsage:
    """The gateway's record: the model answered earlier; the last request got ``status``."""
    return MeteredUsage(
        requests=9,
        tokens=TokenUsage(input=900, output=90),
        served_models=(model,),
        asked_models=(model,),
        rate_limited=int(status == 429),
        last_status=status,
        **fields,
    )


def init() -> dict[str, Any]:
    return {"type": "system", "subtype": "init", "model": M, "mcp_servers": []}


def say(text: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"model": M, "content": [{"type": "text", "text": text}]},
    }


def retry(status: int | None, error: str, attempt: int = 1) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "api_retry",
        "attempt": attempt,
        "max_retries": 10,
        "retry_delay_ms": 30000,
        "error_status": status,
        "error": error,
    }


def run(events: list[dict[str, Any]], **facts: Any) -> tuple[str, str]:
    base = {
        "exit_code": 0,
        "files_changed": 1,
        "wall_seconds": 600.0,
        "model_via_gateway": True,
        "metered": ledger(200),
    }
    data = ClassifyInput(
        events=tuple(events),
        transcript_format="claude-code",
        requested_model=M,
        **{**base, **facts},
    )
    verdict = classify(data)
    return verdict.exit_class, verdict.reason


KILLED = {"timed_out": True, "exit_code": 137}


def test_killed_while_retrying_rate_limits_is_infra_rate_limit() -> None:
    events = [init(), say("Looking."), *[retry(429, "rate_limit", n) for n in range(1, 9)]]
    exit_class, reason = run(events, **KILLED, metered=ledger(429))
    assert exit_class == "infra_rate_limit"
    assert "retrying" in reason and "429" in reason
    exit_class, reason = run(events, **KILLED)  # the API answered its last request
    assert exit_class == "model_timeout" and "no such answer" in reason


def test_killed_while_retrying_an_overloaded_api_is_infra_other() -> None:
    events = [init(), say("Looking."), retry(529, "overloaded_error"), retry(529, "unknown", 2)]
    assert run(events, **KILLED, metered=ledger(529))[0] == "infra_other"


def test_a_retry_with_no_status_at_the_end_is_still_infra() -> None:
    # a connection that keeps failing: no HTTP status at all
    events = [init(), say("Looking."), retry(None, "unknown"), retry(None, "unknown", 2)]
    unreachable = ledger(502, last_refused="upstream unreachable")
    assert run(events, **KILLED, metered=unreachable)[0] == "infra_other"


def test_giving_up_after_rate_limit_retries_is_infra_rate_limit() -> None:
    gave_up = {"type": "result", "subtype": "error_during_execution", "is_error": True}
    events = [init(), say("Looking."), *[retry(429, "rate_limit", n) for n in range(1, 11)]]
    assert run([*events, gave_up], exit_code=1, metered=ledger(429))[0] == "infra_rate_limit"


def test_a_retry_the_model_answered_after_does_not_taint_the_session() -> None:
    events = [init(), retry(429, "rate_limit"), say("Back. Fixing it now.")]
    assert run(events, **KILLED)[0] == "model_timeout"
    done = {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed."}
    assert run([init(), retry(429, "rate_limit"), done])[0] == "completed"


@pytest.mark.parametrize(("status", "text"), [(429, "429"), (529, "529"), (None, "unknown")])
def test_the_parser_keeps_the_retry_the_session_ended_in(status: int | None, text: str) -> None:
    facts = parse_transcript("claude-code", [init(), say("x"), retry(status, "unknown")])
    assert text in facts.retrying
    assert parse_transcript("claude-code", [init(), retry(status, "x"), say("y")]).retrying == ""


# Gemini CLI (0.61) prints nothing on stdout while it retries: its stream-json stops at
# the prompt (or a tool result), and stderr says each retry, in these forms (from the
# real CLI against a Gemini API answering 429 RESOURCE_EXHAUSTED, or 503).
G = "gemini-2.5-flash"
G_BACKOFF = (
    "Attempt 2 failed with status {status}. Retrying with backoff... _ApiError: "
    '{{"error":{{"code":{status},"message":"...","status":"{name}","details":[]}}}}\n'
    "    at throwErrorIfNotOK (file:///opt/gemini/bundle/chunk.js:267833:24)\n"
    "  status: {status}\n}}\n"
)
G_QUOTA = (
    "Attempt 1 failed: You exceeded your current quota, please check your plan and billing "
    "details. Please retry in 30s.\nSuggested retry after 30s.. Retrying after 33559ms...\n"
)


def gemini(*tail: dict[str, Any]) -> list[dict[str, Any]]:
    start = [{"type": "init", "model": G}, {"type": "message", "role": "user", "content": "Fix"}]
    return start + list(tail)


def run_gemini(
    events: list[dict[str, Any]], stderr: str, metered: MeteredUsage | None = None
) -> tuple[str, str]:
    data = ClassifyInput(
        metered=metered or ledger(200, G),
        model_via_gateway=True,
        events=tuple(events),
        transcript_format="gemini-cli",
        requested_model=G,
        exit_code=137,
        timed_out=True,
        wall_seconds=600.0,
        files_changed=0,
        stderr_tail=stderr,
    )
    verdict = classify(data)
    return verdict.exit_class, verdict.reason


@pytest.mark.parametrize(
    ("stderr", "status", "expected"),
    [
        (G_BACKOFF.format(status=429, name="RESOURCE_EXHAUSTED"), 429, "infra_rate_limit"),
        (G_QUOTA, 429, "infra_rate_limit"),
        (
            "Attempt 3 failed with 429 error (no Retry-After header). Retrying with backoff...\n",
            429,
            "infra_rate_limit",
        ),
        (G_BACKOFF.format(status=503, name="UNAVAILABLE"), 503, "infra_other"),
        ("Attempt 1 failed with 5xx error. Retrying with backoff...\n", 500, "infra_other"),
    ],
    ids=["429", "quota-delay", "429-no-retry-after", "503", "5xx"],
)
def test_gemini_killed_while_its_stderr_says_it_retries_is_infra(
    stderr: str, status: int, expected: str
) -> None:
    said = "YOLO mode is enabled.\n" + stderr
    exit_class, reason = run_gemini(gemini(), said, ledger(status, G))
    assert exit_class == expected, reason
    assert "retrying the model API" in reason
    exit_class, reason = run_gemini(gemini(), said)  # the API answered: stderr's word only
    assert exit_class == "model_timeout", reason


def test_gemini_killed_while_retrying_after_a_tool_result_is_infra() -> None:
    events = gemini(
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1"},
        {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "ok"},
    )
    stderr = G_BACKOFF.format(status=429, name="RESOURCE_EXHAUSTED")
    assert run_gemini(events, stderr, ledger(429, G))[0] == "infra_rate_limit"


def test_a_gemini_retry_the_model_answered_after_does_not_taint_the_session() -> None:
    events = gemini({"type": "message", "role": "assistant", "content": "Looking", "delta": True})
    stderr = G_BACKOFF.format(status=429, name="RESOURCE_EXHAUSTED")
    assert run_gemini(events, stderr)[0] == "model_timeout"


def test_gemini_killed_with_no_retry_on_stderr_is_the_models_timeout() -> None:
    assert run_gemini(gemini(), "YOLO mode is enabled.\n")[0] == "model_timeout"


def test_a_stale_gemini_retry_on_stderr_yields_to_the_gateways_last_answer() -> None:
    # The gateway saw the last request answered 200: the retry stderr shows was earlier.
    stderr = G_BACKOFF.format(status=429, name="RESOURCE_EXHAUSTED")
    assert run_gemini(gemini(), stderr, ledger(200, G))[0] == "model_timeout"
