"""The classifier's boundaries: the session's end, the API's own 4xx, a spent budget, signals.

Each test puts evidence on both sides of one boundary the classifier draws: an error just
inside and just outside the final events, a rate limit the CLI reports over a 4xx and over
a 500, a spent budget against the agent's claim, and the final message's signals read with
a table that names some of them or none.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.agents.transcript import ErrorText, TranscriptFacts
from durabench.classify import classify
from durabench.classify.table import load_table
from durabench.models.verdict import ClassifyInput, Signals, TokenUsage, Verdict
from tests.unit.ledgers import MODEL
from tests.unit.ledgers import answered as _ledger

M = MODEL


def _verdict(facts: TranscriptFacts, **data: Any) -> Verdict:
    base: dict[str, Any] = {
        "requested_model": M,
        "files_changed": 1,
        "model_via_gateway": True,
        "metered": _ledger(),
    }
    return classify(ClassifyInput(**(base | data)), facts=facts)


TAIL = load_table().tail_events
N = TAIL + 4
"""Events in the transcript: its last ``TAIL`` start at index ``N - TAIL``."""


@pytest.mark.parametrize(
    ("text", "inside"),
    [("API Error: 429", "infra_rate_limit"), ("prompt is too long", "model_context_exhausted")],
)
@pytest.mark.parametrize("before_the_end", [0, 1])
def test_an_error_counts_from_the_first_of_the_final_events(
    text: str, inside: str, before_the_end: int
) -> None:
    """An infra claim (with the ledger's 429) or a model signature decides the class only
    among the last ``tail_events`` events; one event earlier it is history."""
    index = N - TAIL - before_the_end
    facts = TranscriptFacts(
        n_events=N, errors=(ErrorText(index=index, text=text),), last_message="ok"
    )
    verdict = _verdict(facts, metered=_ledger(last_status=429, rate_limited=1))
    assert verdict.exit_class == ("completed" if before_the_end else inside), verdict.reason


@pytest.mark.parametrize(
    ("status", "exit_class"),
    [(429, "infra_rate_limit"), (499, "infra_rate_limit"), (500, "infra_other")],
)
def test_a_rate_limit_the_cli_reports_needs_the_api_s_own_4xx(status: int, exit_class: str) -> None:
    """The model never answered; the CLI exits 0 saying 429. Only the API's own 4xx in the
    ledger backs a class that cools the account; over a 500 it is ``infra_other``."""
    silent = _ledger(requests=1, tokens=TokenUsage(input=0), served_models=(), last_status=status)
    verdict = _verdict(
        TranscriptFacts(), metered=silent, stderr_tail="Error: 429 Too Many Requests"
    )
    assert verdict.exit_class == exit_class, verdict.reason


def test_a_spent_budget_stays_the_model_s_whatever_infra_failure_the_agent_claims() -> None:
    spent = _ledger(requests=3, tokens=TokenUsage(input=900), served_models=(), budget_spent=True)
    facts = TranscriptFacts(errors=(ErrorText(index=0, text="API Error: 429 rate limit"),))
    verdict = _verdict(facts, metered=spent, exit_code=1)
    assert verdict.exit_class == "model_budget", verdict.reason
    assert verdict.reason.startswith("the attempt's token budget was spent (900 tokens); the")


def test_a_completion_claim_the_message_also_takes_back_is_no_claim() -> None:
    message = "Done with the parser, but I could not finish the migration."
    verdict = _verdict(TranscriptFacts(last_message=message), files_changed=0)
    assert verdict.signals == Signals(acknowledged_incomplete=True)


def test_signals_a_table_does_not_name_are_never_raised() -> None:
    message = "Done. Shall I continue? Which option would you prefer?"
    for kept in ({}, {"asked_to_continue": ("shall i continue",)}):
        table = load_table().model_copy(update={"signals": kept})
        data = ClassifyInput(requested_model=M, files_changed=0, metered=_ledger())
        verdict = classify(data, table, TranscriptFacts(last_message=message))
        assert verdict.signals == Signals(asked_to_continue=bool(kept))
