"""``starter classify`` on another harness's results: the transcript's infra claim, unverified.

A transcript from a run made elsewhere (CodeScaleBench, Harbor) has no gateway ledger, so
no class it gets can be infrastructure: one that ended on a rate limit is the model's
failure by the rule. Triage of foreign results still needs to see which attempts say
they hit a limit, so the verdict names that claim, flagged unverified; a durabench run,
whose model traffic goes through the gateway, never gets one, and its score never uses it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from durabench.agents.transcript import read_events
from durabench.classify import classify
from durabench.models.results import AttemptResult
from durabench.models.verdict import ClassifyInput
from starter.classify import classify as classify_verb
from tests.unit.test_classify import M, api, api_error, claude, result

RATE_LIMITED = claude(
    api_error("API Error: 429 rate_limit_error: This request would exceed the rate limit"),
    result("API Error: 429 rate limit", is_error=True),
)


def _foreign(events: list[dict[str, Any]], **facts: Any) -> ClassifyInput:
    base = {"exit_code": 1, "files_changed": 1, "wall_seconds": 60.0, "requested_model": M}
    return ClassifyInput(events=tuple(events), transcript_format="claude-code", **{**base, **facts})


def test_a_rate_limit_without_a_ledger_is_the_models_class_with_the_claim_unverified() -> None:
    verdict = classify(_foreign(RATE_LIMITED))
    assert not verdict.exit_class.startswith("infra_")
    assert verdict.claimed_class == "infra_rate_limit"
    assert "unverified" in verdict.reason and "no gateway ledger" in verdict.reason


def test_a_durabench_run_never_gets_a_claim() -> None:
    """Through the gateway, the ledger decides: an answered 200 keeps the attempt the model's,
    and no claim of the agent's travels with it."""
    facts = api(200)
    verdict = classify(_foreign(RATE_LIMITED).model_copy(update=facts))
    assert verdict.claimed_class is None and not verdict.exit_class.startswith("infra_")
    silent = classify(_foreign(RATE_LIMITED, model_via_gateway=True))
    assert silent.claimed_class is None


def test_a_transcript_that_claims_nothing_has_no_claim() -> None:
    verdict = classify(_foreign(claude(result("Fixed it.")), exit_code=0))
    assert (verdict.exit_class, verdict.claimed_class) == ("completed", None)


def _shared_cases(root: Path) -> list[dict[str, Any]]:
    return list(json.loads((root / "classify" / "cases.json").read_text()))


def test_every_shared_infra_case_alone_names_its_class_as_an_unverified_claim(
    shared_fixtures: Path,
) -> None:
    """The real transcripts, without the ledger they had: the run-eval class is the claim."""
    wrong = []
    for case in _shared_cases(shared_fixtures):
        text = (shared_fixtures / "classify" / case["transcript"]).read_text()
        keys = ("requested_model", "exit_code", "timed_out", "wall_seconds", "files_changed")
        data = ClassifyInput(
            events=tuple(read_events(text.splitlines())),
            transcript_format=case["agent"],
            build_failed=case["build_failed"],
            **{k: case[k] for k in keys},
        )
        verdict = classify(data)
        expected = case["expected_exit_class"]
        claimed = expected if expected.startswith("infra_") else None
        if verdict.exit_class.startswith("infra_") or verdict.claimed_class != claimed:
            wrong.append((case["name"], verdict.exit_class, verdict.claimed_class))
    assert wrong == []


def test_the_verb_prints_the_claim_as_unverified(tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("\n".join(json.dumps(e) for e in RATE_LIMITED))
    args = [str(transcript), "--agent", "claude-code", "--requested-model", M, "--exit-code", "1"]
    args += ["--wall-seconds", "60", "--files-changed", "1"]
    out = CliRunner().invoke(classify_verb, args)
    assert out.exit_code == 0, out.output
    assert "unverified: the transcript claims infra_rate_limit" in out.output
    as_json = CliRunner().invoke(classify_verb, [*args, "--json"])
    assert json.loads(as_json.output)["claimed_class"] == "infra_rate_limit"


def test_an_attempt_result_carries_no_claim_into_a_score() -> None:
    """A run's attempt keeps its exit class only: the claim is a verdict's, for triage."""
    assert "claimed_class" not in AttemptResult.model_fields
