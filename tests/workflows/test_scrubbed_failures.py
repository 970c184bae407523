"""A secret in a failing activity's message, cause or traceback never reaches history.

On the session's real dev server: the failures are serialised by Temporal itself, and the
whole history is searched, payloads decoded, for the secret.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError
from temporalio.worker import Worker

from activities.boundary import KnownSecrets, scrubbed
from durabench.errors import RewardParseError, SandboxError, non_retryable_names
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.secrets import REDACTED
from starter.run import main as run_main
from tests.workflows.harness import Disk
from workflows import run_workflow_id
from workflows.agent_run import failure_reason

SECRET = "sk-ant-history-secret-7c2d90"


class LeakyActivities:
    """Phases whose errors quote what the agent printed, as real ones do."""

    def __init__(self, home: Path) -> None:
        self.secrets = KnownSecrets(home / "accounts.toml")

    @activity.defn(name="leaky_setup")
    @scrubbed
    async def leaky_setup(self, container: str) -> None:
        try:
            raise OSError(f"stderr of the setup step: export ANTHROPIC_API_KEY={SECRET}")
        except OSError as exc:
            raise SandboxError(f"setting up {container} failed (exit 1): {SECRET}") from exc

    @activity.defn(name="leaky_reward")
    @scrubbed
    async def leaky_reward(self, container: str) -> None:
        raise RewardParseError(f"reward of {container} is {SECRET!r}, not a number")


_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=10),
    maximum_attempts=2,
    non_retryable_error_types=non_retryable_names(),
)


@workflow.defn(sandboxed=False)
class LeakyWorkflow:
    """Records the first failure's reason (as an attempt's result would), then fails."""

    @workflow.run
    async def run(self, container: str) -> None:
        reason = ""
        try:
            await workflow.execute_activity(
                "leaky_setup",
                container,
                start_to_close_timeout=timedelta(seconds=10),
                retry_policy=_RETRY,
            )
        except ActivityError as err:
            reason = failure_reason(err)
        await workflow.execute_activity(
            "leaky_reward",
            f"{container} ({reason})",
            start_to_close_timeout=timedelta(seconds=10),
            retry_policy=_RETRY,
        )


def _everything(history_json: str) -> str:
    """The history's JSON with every payload's data decoded beside it."""
    found: list[str] = [history_json]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "data" and isinstance(value, str):
                    found.append(base64.b64decode(value).decode(errors="replace"))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(json.loads(history_json))
    return "\n".join(found)


async def test_a_failing_activity_leaves_no_secret_in_history(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)  # known to the worker, as an agent key
    queue = f"leak-{uuid.uuid4().hex[:8]}"
    acts = LeakyActivities(tmp_path)
    async with Worker(
        client,
        task_queue=queue,
        workflows=[LeakyWorkflow],
        activities=[acts.leaky_setup, acts.leaky_reward],
    ):
        handle = await client.start_workflow(
            LeakyWorkflow.run, "c-1", id=f"leak-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
        with pytest.raises(WorkflowFailureError) as failed:
            await handle.result()
    cause = failed.value.cause
    assert isinstance(cause, ActivityError)
    assert failure_reason(cause) == (
        f"RewardParseError: reward of c-1 (SandboxError: setting up c-1 failed (exit 1): "
        f"{REDACTED}) is '{REDACTED}', not a number"
    )
    history = await handle.fetch_history()
    text = _everything(history.to_json())
    assert SECRET not in text
    assert text.count(REDACTED) >= 3
    started = [e.activity_task_started_event_attributes.attempt for e in history.events]
    started = [n for n in started if n]
    assert started == [2, 1], "the setup error was retried, the reward's was not"
    failures = [
        e.activity_task_failed_event_attributes.failure
        for e in history.events
        if e.HasField("activity_task_failed_event_attributes")
    ]
    assert [f.application_failure_info.type for f in failures] == [
        "SandboxError",
        "RewardParseError",
    ]
    assert [f.HasField("cause") for f in failures] == [False, False]
    assert [f.application_failure_info.non_retryable for f in failures] == [False, True]


async def test_a_plan_that_quotes_a_secret_fails_the_run_without_it(
    disk: Disk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real plan activity: a replay plan's validation error quotes the bad value."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"cases": [{"exit_code": SECRET}]}))
    request = RunRequest(
        run_id=f"r-{uuid.uuid4().hex[:6]}",
        suite="pytorch",
        agent=AgentSpec(name="replay", options={"plan": str(plan)}),
    )
    await run_main(request, detach=True, client=disk.client, settings=disk.settings)
    handle = disk.client.get_workflow_handle(run_workflow_id(request.run_id))
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    history = await handle.fetch_history()
    text = _everything(history.to_json())
    assert SECRET not in text
    assert f"input_value='{REDACTED}'" in text  # the plan's error, as the run failed with it
