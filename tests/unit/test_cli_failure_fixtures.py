"""What the real agent CLIs printed when their model API failed, and the class each deserves.

The fixtures under ``tests/fixtures/<cli>/<version>/<mode>.json`` were recorded from the
real Claude Code, Codex CLI and Gemini CLI against a scripted API answering in its
provider's error shape (``scripts/record_cli_failures.py``): a session killed while it
retried a 429 is a rate limit, never the model's timeout; a usage limit or spent quota is
a usage cap; a key refused is auth; an overloaded or cut-off API, or a model it does not
serve, is infrastructure; a prompt too long is the model's context. That is what the
gateway's record of the same responses decides; from the transcript alone (no record) the
CLI's words are the agent's, so none of them is infrastructure.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from durabench.accounts import account_cooldown
from durabench.agents import read_events
from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, ExitClass, MeteredUsage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_COMMON = {
    "rate_limit_retry_after": "infra_rate_limit",
    "rate_limit_bare": "infra_rate_limit",
    "overloaded": "infra_other",
    "unauthorized": "infra_auth",
    "forbidden": "infra_auth",
    "prompt_too_long": "model_context_exhausted",
    "unknown_model": "infra_other",
    "stream_cut": "infra_other",
}
EXPECTED: dict[str, dict[str, ExitClass]] = {
    "claude-code": _COMMON,
    "codex-cli": _COMMON
    | {
        "rate_limit_stream": "infra_rate_limit",  # response.failed rate_limit_exceeded
        "usage_limit": "infra_usage_cap",  # 429 usage_limit_reached, with its reset
        "usage_not_included": "infra_auth",  # 429 usage_not_included: the plan has no Codex
        "quota_exceeded": "infra_usage_cap",  # 429 insufficient_quota: billing, no reset soon
        "prompt_too_long_stream": "model_context_exhausted",  # response.failed
    },
    "gemini-cli": _COMMON
    | {
        "usage_limit": "infra_usage_cap",  # RESOURCE_EXHAUSTED on a per-day quota
        "usage_limit_long_delay": "infra_usage_cap",  # a quota retry delay over 5 minutes
        "key_invalid": "infra_auth",  # 400 API_KEY_INVALID, as Google refuses a bad key
    },
}
"""Per CLI, the class each recorded failure mode deserves."""
MODELS = {
    "claude-code": "claude-haiku-4-5",
    "codex-cli": "gpt-5-codex",
    "gemini-cli": "gemini-2.5-flash",
}
NOW = datetime(2026, 11, 26, 15, 0, tzinfo=UTC)
RECORDED = sorted(
    path
    for cli, modes in EXPECTED.items()
    for path in (FIXTURES / cli).glob("*/*.json")
    if path.stem in modes
)


def _fixture(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _input(fx: dict[str, Any], metered: MeteredUsage | None) -> ClassifyInput:
    return ClassifyInput(
        model_via_gateway=metered is not None,
        events=tuple(read_events(fx["stdout"])),
        transcript_format=fx["cli"],
        requested_model=MODELS[fx["cli"]],
        exit_code=fx["exit_code"],
        timed_out=fx["timed_out"],
        wall_seconds=40.0,
        files_changed=0,
        stderr_tail=fx["stderr_tail"],
        metered=metered,
    )


_STREAM_ERRORS = {"rate_limit_stream": "rate_limit_exceeded"}
"""Modes whose 200 stream failed with an error type the gateway's meter reads."""


def _metered(fx: dict[str, Any]) -> MeteredUsage:
    statuses: list[int] = fx["statuses"]
    return MeteredUsage(
        last_error=_STREAM_ERRORS.get(fx["mode"], ""),
        requests=len(statuses),
        asked_models=(MODELS[fx["cli"]],),
        rate_limited=statuses.count(429),
        overloaded=statuses.count(529),
        auth_refused=sum(s in (401, 403) for s in statuses),
        last_status=statuses[-1] if statuses else 0,
    )


@pytest.mark.parametrize("cli", sorted(EXPECTED))
def test_every_failure_mode_was_recorded(cli: str) -> None:
    versions = {p.parent.name for p in RECORDED if p.parent.parent.name == cli}
    assert versions, f"no fixtures under {FIXTURES / cli}: run scripts/record_cli_failures.py"
    for version in versions:
        modes = {p.stem for p in RECORDED if p.parent.name == version}
        missing = set(EXPECTED[cli]) - modes
        assert not missing, f"{cli} {version} lacks {sorted(missing)}"


@pytest.mark.parametrize(
    "path", RECORDED, ids=lambda p: f"{p.parent.parent.name}-{p.parent.name}-{p.stem}"
)
def test_from_its_transcript_alone_no_failure_is_infrastructure(path: Path) -> None:
    fx = _fixture(path)
    verdict = classify(_input(fx, None))
    assert verdict.exit_class.startswith("model_"), verdict.reason


@pytest.mark.parametrize(
    "path", RECORDED, ids=lambda p: f"{p.parent.parent.name}-{p.parent.name}-{p.stem}"
)
def test_the_gateways_record_agrees(path: Path) -> None:
    fx = _fixture(path)
    verdict = classify(_input(fx, _metered(fx)))
    assert verdict.exit_class == EXPECTED[fx["cli"]][fx["mode"]], verdict.reason


@pytest.mark.parametrize(
    "path",
    [p for p in RECORDED if EXPECTED[p.parent.parent.name][p.stem] == "infra_usage_cap"],
    ids=lambda p: f"{p.parent.parent.name}-{p.parent.name}-{p.stem}",
)
def test_a_usage_cap_cools_for_what_the_api_said_never_what_the_cli_printed(path: Path) -> None:
    fx = _fixture(path)
    metered = _metered(fx)  # the scripted API sent no reset header
    verdict = classify(_input(fx, metered))
    hour = timedelta(hours=1)
    until = account_cooldown(verdict.exit_class, metered, NOW, hour, 5 * hour)
    assert until == NOW + hour, verdict.reason
