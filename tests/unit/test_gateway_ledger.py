"""The ledger's summary tells the API's answers from the gateway's own refusals.

An agent can make the gateway refuse it at will (a path, a model, a budget it has
spent); those refusals must never read as the API refusing the key, rate-limiting or
overloading, or a hostile agent could launder its failure into an excluded ``infra_*``
attempt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from durabench.classify import classify
from durabench.gateway import LedgerEntry, read_ledger
from durabench.gateway.ledger import append_entry
from durabench.gateway.meter import ResponseUsage
from durabench.models.verdict import ClassifyInput

MODEL = "claude-haiku-4-5"


def _entry(status: int, refused: str = "", **fields: Any) -> LedgerEntry:
    return LedgerEntry(
        at=0, provider="anthropic", path="/v1/messages", status=status, refused=refused, **fields
    )


def _write(path: Path, *entries: LedgerEntry) -> Path:
    for entry in entries:
        append_entry(path, entry)
    return path


def test_refusals_the_agent_asked_for_are_not_the_api_s_answers(tmp_path: Path) -> None:
    served = ResponseUsage(model=MODEL, input=100, output=10)
    ledger = _write(
        tmp_path / "gateway.jsonl",
        _entry(200, usage=served, asked_model=MODEL),
        _entry(403, "path"),
        _entry(403, "model", asked_model="claude-opus-4-1"),
        _entry(403, "path"),
        _entry(413, "size"),
    )
    metered = read_ledger(ledger)
    assert metered is not None
    assert (metered.requests, metered.refused_path, metered.refused_model) == (5, 2, 1)
    assert (metered.auth_refused, metered.rate_limited, metered.overloaded) == (0, 0, 0)
    assert (metered.last_status, metered.last_error) == (200, "")


def test_the_api_s_own_refusals_and_the_host_s_trouble_still_count(tmp_path: Path) -> None:
    limited = ResponseUsage(error="rate_limit_error")
    ledger = _write(
        tmp_path / "gateway.jsonl",
        _entry(401),
        _entry(429, usage=limited, retry_after="30"),
        _entry(403, "path"),
        _entry(502, "upstream unreachable"),
    )
    metered = read_ledger(ledger)
    assert metered is not None
    assert (metered.auth_refused, metered.rate_limited) == (1, 1)
    assert (metered.last_status, metered.last_error) == (502, "upstream unreachable")


def test_an_agent_refused_on_purpose_is_not_classified_as_a_refused_key(tmp_path: Path) -> None:
    served = ResponseUsage(model=MODEL, input=100, output=10)
    ledger = _write(
        tmp_path / "gateway.jsonl",
        _entry(200, usage=served, asked_model=MODEL),
        *[_entry(403, "path") for _ in range(5)],
    )
    data = ClassifyInput(
        events=({"type": "system", "subtype": "init", "model": MODEL},),
        transcript_format="claude-code",
        requested_model=MODEL,
        files_changed=0,
        exit_code=1,
        metered=read_ledger(ledger),
    )
    verdict = classify(data)
    assert not verdict.exit_class.startswith("infra_"), verdict.reason


def test_the_served_model_is_the_one_that_wrote_the_most_output(tmp_path: Path) -> None:
    """The main model answers 2 requests of 500 output tokens (1,000); an auxiliary model
    (titles, summaries) answers 5 of 10 (50). By output the main model leads, 1,000 to 50;
    by request count the auxiliary one would, 5 to 2, and be published as served."""
    main, aux = "claude-sonnet-4-5", "claude-haiku-4-5"
    answers = [ResponseUsage(model=main, input=900, output=500) for _ in range(2)]
    answers += [ResponseUsage(model=aux, input=50, output=10) for _ in range(5)]
    ledger = _write(tmp_path / "gateway.jsonl", *(_entry(200, usage=u) for u in answers))
    metered = read_ledger(ledger)
    assert metered is not None and metered.served_models == (main, aux)
    data = ClassifyInput(
        events=({"type": "system", "subtype": "init", "model": main},),
        transcript_format="claude-code",
        requested_model=main,
        files_changed=1,
        exit_code=0,
        metered=metered,
    )
    assert classify(data).served_model == main
