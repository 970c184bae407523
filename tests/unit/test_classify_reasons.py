"""The classifier's reasons, whole: a verdict's reason is published in the run's reports.

Each case states the evidence (the worker's facts, the ledger, the transcript's facts given
directly) and the exact class and reason a reader of the report gets, so a reason that
loses a clause, gains a stray one or quotes the wrong text fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.agents.transcript import ErrorText, McpServerState, TranscriptFacts
from durabench.classify import classify
from durabench.classify.mcp_report import mcp_mismatch
from durabench.models.verdict import ClassifyInput, MeteredUsage, Verdict
from tests.unit.ledgers import MODEL, answered

M = MODEL
ANSWERED = answered()
NONE_ANSWERED = MeteredUsage(requests=2, asked_models=(M,), last_refused="model not granted")
NO_SERVED = (
    "; no model answered any of its 2 request(s) (last status 0), so no served model is recorded"
)


def _verdict(facts: TranscriptFacts | None = None, **data: Any) -> Verdict:
    base: dict[str, Any] = {
        "requested_model": M,
        "files_changed": 1,
        "wall_seconds": 12.4,
        "model_via_gateway": True,
        "metered": ANSWERED,
    }
    return classify(ClassifyInput(**(base | data)), facts=facts or TranscriptFacts())


def _errors(*texts: str) -> tuple[ErrorText, ...]:
    return tuple(ErrorText(index=i, text=t) for i, t in enumerate(texts))


LONG = "x" * 300
CASES: dict[str, tuple[TranscriptFacts, dict[str, Any], str, str]] = {
    "a text task answered": (
        TranscriptFacts(last_message="42"),
        {"expects_change": False},
        "completed",
        "ended on its own after 12 s and answered",
    ),
    "a text task not answered": (
        TranscriptFacts(),
        {"expects_change": False},
        "model_no_code",
        "ended on its own without an answer",
    ),
    "no file changed": (
        TranscriptFacts(last_message="Looked around."),
        {"files_changed": 0},
        "model_no_code",
        "ended on its own without changing a file",
    ),
    "a non-zero exit with no error text": (
        TranscriptFacts(),
        {"exit_code": 1},
        "model_agent_error",
        "exit code 1, no infra signature (no error text)",
    ),
    "a non-zero exit quotes the last error, stripped and cut at 240": (
        TranscriptFacts(errors=_errors("first", f"  {LONG}  ")),
        {"exit_code": 2},
        "model_agent_error",
        f"exit code 2, no infra signature ({'x' * 240})",
    ),
    "a model signature quotes its text cut at 240": (
        TranscriptFacts(errors=_errors(f"prompt is too long: {LONG}")),
        {"exit_code": 1},
        "model_context_exhausted",
        f"error at the end of the session: {f'prompt is too long: {LONG}'[:240]!r} "
        "matches 'prompt is too long'",
    ),
    "the ledger's 429 at the time limit, no claim": (
        TranscriptFacts(),
        {
            "timed_out": True,
            "metered": ANSWERED.model_copy(update={"last_status": 429, "rate_limited": 2}),
        },
        "infra_rate_limit",
        "the model API refused its last request with 429 (2 in all)",
    ),
    "no request through the gateway, nothing on stderr": (
        TranscriptFacts(),
        {"exit_code": 1, "metered": None},
        "infra_other",
        "the agent CLI exited 1 and the gateway saw no model request of its 0 request(s), "
        "so no session began: 'nothing on stderr'",
    ),
    "requests none answered, the last stderr line cut at 240": (
        TranscriptFacts(),
        {"exit_code": 1, "metered": NONE_ANSWERED, "stderr_tail": f"odd\n  {LONG}  \n \n"},
        "infra_other",
        "the agent CLI exited 1 and the model answered none of its 2 request(s), "
        f"so no session began: {'x' * 240!r}{NO_SERVED}",
    ),
    "requests none answered, the CLI names a network failure": (
        TranscriptFacts(),
        {"exit_code": 1, "metered": NONE_ANSWERED, "stderr_tail": "fetch failed"},
        "infra_other",
        "the model answered none of its 2 request(s), so no session began: "
        f"'fetch failed' matches 'fetch failed'{NO_SERVED}",
    ),
    "a retry no infra signature names, claimed but not in the ledger": (
        TranscriptFacts(last_message="Fixed it.", retrying="API retry 3: failed with status 418"),
        {},
        "completed",
        "ended on its own after 12 s, 1 file changed; the agent's output claims infra_other "
        "(the session ended while retrying the model API: 'API retry 3: failed with status "
        "418'), but the gateway recorded no such answer from the model API, so the attempt "
        "is the model's",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_reason_says_exactly_what_decided_the_class(case: str) -> None:
    facts, data, exit_class, reason = CASES[case]
    verdict = _verdict(facts, **data)
    assert (verdict.exit_class, verdict.reason) == (exit_class, reason)


def test_the_cli_s_mcp_report_is_added_to_the_reason_not_put_in_its_place() -> None:
    reported = (McpServerState(name="search", status="failed"),)
    verdict = _verdict(
        TranscriptFacts(last_message="Fixed it.", mcp_servers=reported), mcp_servers=("search",)
    )
    said = mcp_mismatch(("search",), reported)
    assert said
    assert verdict.exit_class == "completed"
    assert verdict.reason == (
        f"ended on its own after 12 s, 1 file changed; the CLI's own report says {said} "
        "(its word only, not the gateway's)"
    )


@pytest.mark.parametrize(("awaiting", "claimed"), [(True, True), (False, False)])
def test_gemini_s_stderr_retries_count_only_when_its_transcript_awaits_the_model(
    awaiting: bool, claimed: bool
) -> None:
    stderr = "Attempt 2 failed with status 503. Retrying with backoff...\n"
    verdict = _verdict(
        TranscriptFacts(last_message="Fixed it.", awaiting_model=awaiting),
        transcript_format="gemini-cli",
        stderr_tail=stderr,
    )
    assert verdict.exit_class == "completed"
    assert ("retrying the model API" in verdict.reason) is claimed, verdict.reason


def test_a_ledger_of_one_request_is_the_verdict_s_record() -> None:
    one = ANSWERED.model_copy(update={"requests": 1})
    verdict = _verdict(TranscriptFacts(last_message="Fixed it."), metered=one)
    assert verdict.metered == one
    assert verdict.tokens == one.tokens
    assert verdict.served_model == M
