"""What the real Claude Code printed when its model API failed, and the class each deserves.

The fixtures under ``tests/fixtures/claude-code/<version>/`` were recorded from the real
CLI against a scripted API (``scripts/record_cli_failures.py``): a session killed while
it retried a 429 is a rate limit, never the model's timeout; a key refused is auth; an
overloaded or cut-off API, or a model it does not serve, is infrastructure; a prompt too
long is the model's context. Each is classified twice: from the transcript alone, and
with the gateway's record of the same responses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from durabench.agents import read_events
from durabench.classify import classify
from durabench.models import ClassifyInput, MeteredUsage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code"
EXPECTED = {
    "rate_limit_retry_after": "infra_rate_limit",
    "rate_limit_bare": "infra_rate_limit",
    "overloaded": "infra_other",
    "unauthorized": "infra_auth",
    "forbidden": "infra_auth",
    "prompt_too_long": "model_context_exhausted",
    "unknown_model": "infra_other",
    "stream_cut": "infra_other",
}
RECORDED = sorted(FIXTURES.glob("*/*.json"))


def _fixture(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _input(fx: dict[str, Any], metered: MeteredUsage | None) -> ClassifyInput:
    return ClassifyInput(
        events=tuple(read_events(fx["stdout"])),
        transcript_format="claude-code",
        requested_model="claude-haiku-4-5",
        exit_code=fx["exit_code"],
        timed_out=fx["timed_out"],
        wall_seconds=40.0,
        files_changed=0,
        stderr_tail=fx["stderr_tail"],
        metered=metered,
    )


def _metered(statuses: list[int]) -> MeteredUsage:
    return MeteredUsage(
        requests=len(statuses),
        asked_models=("claude-haiku-4-5",),
        rate_limited=statuses.count(429),
        overloaded=statuses.count(529),
        auth_refused=sum(s in (401, 403) for s in statuses),
        last_status=statuses[-1] if statuses else 0,
    )


def test_every_failure_mode_was_recorded() -> None:
    assert RECORDED, f"no fixtures under {FIXTURES}: run scripts/record_cli_failures.py"
    for version in {p.parent.name for p in RECORDED}:
        modes = {p.stem for p in RECORDED if p.parent.name == version}
        assert modes == set(EXPECTED), f"claude-code {version} lacks {set(EXPECTED) - modes}"


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_the_real_clis_failure_is_classified_from_its_transcript(path: Path) -> None:
    fx = _fixture(path)
    verdict = classify(_input(fx, None))
    assert verdict.exit_class == EXPECTED[fx["mode"]], verdict.reason


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_the_gateways_record_agrees(path: Path) -> None:
    fx = _fixture(path)
    verdict = classify(_input(fx, _metered(fx["statuses"])))
    assert verdict.exit_class == EXPECTED[fx["mode"]], verdict.reason
