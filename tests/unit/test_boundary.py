"""Failures and results leave activities scrubbed, typed as before, cancellations untouched."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import traceback
from collections.abc import Callable, Coroutine, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToJson
from temporalio.api.failure.v1 import Failure
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory, CancelledError
from temporalio.testing import ActivityEnvironment

import activities
from activities import ResultActivities
from activities.boundary import KnownSecrets, scrubbed
from durabench.errors import (
    NON_RETRYABLE,
    RewardParseError,
    SandboxError,
    UploadUrlRefused,
)
from durabench.models.attempt import AgentRunOutput
from durabench.models.results import AttemptResult
from durabench.models.verdict import Verdict
from durabench.settings.paths import RunPaths
from durabench.settings.secrets import REDACTED
from durabench.settings.values import Settings

SECRET = "sk-ant-boundary-secret-4f1e"


class Acts:
    """An activity class whose methods raise or return what they are given."""

    def __init__(self, secrets: Callable[[], Sequence[str]] = lambda: (SECRET,)) -> None:
        self.secrets = secrets

    @scrubbed
    async def fail(self, exc: BaseException) -> None:
        raise exc

    @scrubbed
    async def fail_with_cause(self, exc: Exception) -> None:
        try:
            raise OSError(f"sh: setup step printed {SECRET}")
        except OSError as cause:
            raise exc from cause

    @scrubbed
    async def give(self, value: object) -> object:
        return value


def _raised(call: Callable[[], Coroutine[Any, Any, object]]) -> ApplicationError:
    with pytest.raises(ApplicationError) as err:
        asyncio.run(call())
    return err.value


def _travels(err: BaseException) -> str:
    """All that Temporal would record of ``err``: its failure, causes and stack traces."""
    failure = Failure()
    DataConverter.default.failure_converter.to_failure(
        err, DataConverter.default.payload_converter, failure
    )
    return MessageToJson(failure) + "".join(traceback.format_exception(err))


def test_a_failure_leaves_scrubbed_with_its_type_and_without_its_cause() -> None:
    setup = SandboxError(f"setting up claude-code failed (exit 1): token={SECRET}")
    err = _raised(lambda: Acts().fail_with_cause(setup))
    assert err.type == "SandboxError" and not err.non_retryable
    assert err.message == f"setting up claude-code failed (exit 1): token={REDACTED}"
    assert err.__cause__ is None and err.__suppress_context__
    assert SECRET not in _travels(err)
    assert "setting up claude-code failed" in _travels(err)


def test_what_temporal_would_record_of_a_raw_failure_carries_the_secret() -> None:
    """The failure as it travelled before: message, cause and traceback all carry it."""
    raw = SandboxError(f"setup failed: {SECRET}")
    try:
        try:
            raise OSError(f"sh: setup step printed {SECRET}")
        except OSError as cause:
            raise raw from cause
    except SandboxError:
        pass
    assert _travels(raw).count(SECRET) >= 3  # message, cause's message, formatted chain
    assert SECRET not in _travels(_raised(lambda: Acts().fail(raw)))


@pytest.mark.parametrize("leaf", NON_RETRYABLE)
def test_a_non_retryable_leaf_stays_non_retryable(leaf: type[Exception]) -> None:
    err = _raised(lambda: Acts().fail(leaf(f"bad: {SECRET}")))
    assert (err.type, err.non_retryable) == (leaf.__name__, True)
    assert SECRET not in err.message


def test_retryability_follows_the_leaf_not_its_parents() -> None:
    assert _raised(lambda: Acts().fail(RewardParseError("x"))).non_retryable
    refused = _raised(lambda: Acts().fail(UploadUrlRefused("x")))  # a ServiceRejected child
    assert (refused.type, refused.non_retryable) == ("UploadUrlRefused", False)
    plain = _raised(lambda: Acts().fail(KeyError(SECRET)))
    assert (plain.type, plain.non_retryable) == ("KeyError", False)
    assert SECRET not in plain.message


def test_an_application_error_already_raised_is_scrubbed_and_keeps_its_fields() -> None:
    asked = ApplicationError(
        f"service busy: {SECRET}",
        type="ServiceError",
        next_retry_delay=timedelta(seconds=900),
        category=ApplicationErrorCategory.BENIGN,
    )
    err = _raised(lambda: Acts().fail_with_cause(asked))
    assert err.message == f"service busy: {REDACTED}" and err.__cause__ is None
    assert (err.type, err.non_retryable, err.next_retry_delay, err.category) == (
        "ServiceError",
        False,
        timedelta(seconds=900),
        ApplicationErrorCategory.BENIGN,
    )
    final = _raised(lambda: Acts().fail(ApplicationError("no", type="X", non_retryable=True)))
    assert final.non_retryable and final.type == "X"
    named = _raised(lambda: Acts().fail(ApplicationError("no", type="RewardParseError")))
    assert named.non_retryable
    untyped = _raised(lambda: Acts().fail(ApplicationError(f"again {SECRET}")))
    assert untyped.type is None and untyped.message == f"again {REDACTED}"


def test_cancellation_passes_through_untouched() -> None:
    for cancel in (asyncio.CancelledError(), CancelledError("Cancelled")):
        with pytest.raises(type(cancel)) as err:
            asyncio.run(Acts().fail(cancel))
        assert err.value is cancel


def test_unreadable_secrets_withhold_the_message() -> None:
    def broken() -> Sequence[str]:
        raise RuntimeError("registry unreadable")

    err = _raised(lambda: Acts(broken).fail(SandboxError(f"exit 1: {SECRET}")))
    assert err.type == "SandboxError" and SECRET not in _travels(err)
    assert "withheld" in err.message


def test_results_leave_with_every_string_scrubbed() -> None:
    verdict = Verdict(
        exit_class="completed",
        reason="done",
        served_model=f"model-{SECRET}",
        last_message=SECRET,
        classifier_version=3,
    )
    out = asyncio.run(Acts().give(verdict))
    assert isinstance(out, Verdict)
    assert (out.served_model, out.last_message) == (f"model-{REDACTED}", REDACTED)
    assert out.classifier_version == 3
    run = AgentRunOutput(exit_code=0, timed_out=False, cut=(f"{SECRET}.bin over 64 MiB",))
    assert asyncio.run(Acts().give(run)).cut == (f"{REDACTED}.bin over 64 MiB",)  # type: ignore[attr-defined]
    nested = {"k": [SECRET, (1, SECRET)], SECRET: None}
    assert asyncio.run(Acts().give(nested)) == {"k": [REDACTED, (1, REDACTED)], REDACTED: None}
    assert asyncio.run(Acts(lambda: ()).give(SECRET)) == SECRET


def test_every_activity_of_the_worker_is_scrubbed() -> None:
    found = set()
    for name in activities.__all__:
        for attr, fn in inspect.getmembers(getattr(activities, name), inspect.isfunction):
            if hasattr(fn, "__temporal_activity_definition"):
                found.add(attr)
                assert fn.__code__.co_qualname == "scrubbed.<locals>.at_boundary", attr
    attempt_output = {"provision_sandbox", "run_agent", "verify", "finish_sandbox"}
    attempt_output |= {"record_attempt", "evaluate_attempt", "score_run"}
    assert attempt_output < found


def test_known_secrets_cover_agent_service_and_account_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-agent-key-1")
    monkeypatch.setenv("VALS_AUTH_KEY", "vals-service-key-2")
    monkeypatch.setenv("TEAM_A_TOKEN", "team-a-account-token-3")
    accounts = tmp_path / "accounts.toml"
    accounts.write_text(
        '[[account]]\nid = "a"\nagent = "claude-code"\nsecret_env = "TEAM_A_TOKEN"\n'
    )
    known = KnownSecrets(accounts)
    assert {"sk-ant-agent-key-1", "vals-service-key-2", "team-a-account-token-3"} <= set(known())
    accounts.write_text("not toml [")
    assert "team-a-account-token-3" in known()  # seen once, scrubbed for good


async def test_result_json_is_scrubbed_before_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result recorded from history written before the boundary, or by any other path."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    settings = Settings(home=tmp_path / "home")
    result = AttemptResult(
        run_id="r1",
        task_id="t1",
        lane="baseline",
        attempt=1,
        exit_class="infra_other",
        reason=f"SandboxError: setting up failed: {SECRET}",
        verifier_error=SECRET,
        served_model=SECRET,
        agent="claude-code",
        model="m",
    )
    digest = await ActivityEnvironment().run(ResultActivities(settings).record_attempt, result)
    path = RunPaths.for_run(settings.runs_dir, "r1").attempt("t1", "baseline", 1) / "result.json"
    kept = AttemptResult.model_validate_json(path.read_text())
    assert SECRET not in path.read_text()
    # What goes into history is the hash of the file as written, scrubbed: no content.
    assert digest.files["result.json"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest.files["submission.patch"] is None and SECRET not in digest.model_dump_json()
    assert kept.reason == f"SandboxError: setting up failed: {REDACTED}"
