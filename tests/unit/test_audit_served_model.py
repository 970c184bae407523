"""The audit holds an attempt's model to the rule its score was decided by: the meter's.

Issue 47 defect 16: a replay transcript that names a model (its agent calls none, so no
gateway metered it) made the audit say "served claude-haiku-4-5-20251001 for requested
none, and the attempt is not marked MODEL MISMATCH" while the run scored the attempt: the
classifier takes only the gateway's ledger as evidence of a swap, the audit took the
transcript's word. Both now ask :func:`durabench.classify.model_mismatch` of the kept
ledger. The family check classifies every kind of session (requested model, what was
asked and served through the gateway, or no gateway and what the transcript says), writes
what the worker writes, and the audit agrees with the score every time; an attempt whose
mark was edited away is still named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from durabench.atomic import atomic_write
from durabench.audit import audit_run
from durabench.classify import classify
from durabench.gateway import read_ledger
from durabench.models.results import AttemptResult
from durabench.models.verdict import ClassifyInput, Verdict
from durabench.settings.paths import RunPaths
from tests.unit.test_audit import RUN, _attempts, _write

LEDGER = "gateway.jsonl"


def _entry(asked: str, served: str) -> dict[str, Any]:
    usage = {"model": served, "input": 1000, "output": 100}
    return {
        "at": 1767225600.0,
        "provider": "anthropic",
        "path": "/v1/messages",
        "status": 200,
        "asked_model": asked,
        "usage": usage,
    }


SESSIONS = {
    "replay, no gateway, transcript names a model": ("none", None, "claude-haiku-4-5-20251001"),
    "no gateway, transcript names another model": ("m", None, "other-model"),
    "gateway served the requested model": ("m", ("m", "m"), "m"),
    "gateway served its dated snapshot": ("m", ("m", "m-20250101"), "m"),
    "gateway served the requested and an auxiliary model": ("m", ("aux", "aux"), "m"),
    "gateway swapped the model": ("m", ("m", "other-model"), "m"),
    "agent asked the gateway for another model": ("m", ("other-model", "other-model"), "m"),
}
"""Each kind: requested model, the gateway's (asked, served) or none, the transcript's model."""


def _session(tmp_path: Path, kind: str) -> tuple[Path, Verdict]:
    """The run with t1/baseline/1 as the worker writes that session: result and ledger."""
    requested, metered_pair, transcript_model = SESSIONS[kind]
    ledger = tmp_path / "ledger.jsonl"
    entries = [_entry(*metered_pair)] if metered_pair else []
    if kind == "gateway served the requested and an auxiliary model":
        entries = [_entry("m", "m"), _entry("aux", "aux"), _entry("aux", "aux")]
    ledger.write_text("".join(json.dumps(e) + "\n" for e in entries))
    events = (
        {"type": "system", "subtype": "init", "model": transcript_model},
        {"type": "result", "subtype": "success", "is_error": False, "result": "Done."},
    )
    verdict = classify(
        ClassifyInput(
            events=events,
            transcript_format="claude-code",
            requested_model=requested,
            files_changed=1,
            metered=read_ledger(ledger),
            model_via_gateway=bool(entries),
        )
    )
    fields = verdict.model_dump(include={"exit_class", "reason", "served_model"})
    reward = 1.0 if not verdict.exit_class.startswith("infra_") else None
    attempts = _attempts(t1_baseline_1={**fields, "model": requested, "reward": reward})
    runs = tmp_path / "runs"
    paths = _write(runs, attempts)
    if entries:
        (paths.attempt("t1", "baseline", 1) / LEDGER).write_text(ledger.read_text())
    return runs, verdict


def _served_findings(runs: Path) -> list[str]:
    report = audit_run(runs, RUN, None, skipped="no server in a unit test")
    return [line for line in report.lines() if line.startswith("[served_model] t1/baseline/")]


@pytest.mark.parametrize("kind", sorted(SESSIONS))
def test_the_audit_agrees_with_the_score_on_every_kind_of_session(
    tmp_path: Path, kind: str
) -> None:
    runs, _ = _session(tmp_path, kind)
    findings = _served_findings(runs)
    requested = SESSIONS[kind][0]
    if requested != "m":  # the plan asks for m: that finding is about the plan, not the meter
        assert findings == [
            f"[served_model] t1/baseline/attempt-1: requested {requested}, but the run's plan "
            "asks for m"
        ]
    else:
        assert findings == []


def test_the_replay_of_the_issue_is_scored_and_audits_clean(tmp_path: Path) -> None:
    runs, verdict = _session(tmp_path, "replay, no gateway, transcript names a model")
    assert verdict.exit_class == "completed" and "MODEL MISMATCH" not in verdict.reason
    assert not any("for requested none" in line for line in _served_findings(runs))


@pytest.mark.parametrize(
    "kind", ["gateway swapped the model", "agent asked the gateway for another model"]
)
def test_a_swap_the_ledger_shows_is_named_when_its_mark_is_edited_away(
    tmp_path: Path, kind: str
) -> None:
    runs, verdict = _session(tmp_path, kind)
    assert verdict.exit_class == "infra_other" and "MODEL MISMATCH" in verdict.reason
    paths = RunPaths.for_run(runs, RUN)
    result = paths.attempt("t1", "baseline", 1) / "result.json"
    edited = AttemptResult.model_validate_json(result.read_text()).model_copy(
        update={"exit_class": "completed", "reason": "done", "reward": 1.0}
    )
    atomic_write(result, edited.model_dump_json())
    (finding,) = _served_findings(runs)
    assert finding.startswith("[served_model] t1/baseline/attempt-1: the gateway's ledger shows ")
    assert finding.endswith(
        "and the attempt is not marked MODEL MISMATCH and kept out of the scores"
    )
