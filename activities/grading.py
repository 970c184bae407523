"""Service activities: grade a recorded attempt, and score a lane, through a benchmark service.

Both read what they send from the run directory and write what they get back beside it,
so a finished run is graded again (``starter score``) without running any agent. The key
is read from the worker's environment inside the activity, right before the client is
built: it never travels through Temporal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.boundary import KnownSecrets, scrubbed
from activities.heartbeat import heartbeating
from durabench.errors import ServiceError
from durabench.results.store import pull, pulled, push
from durabench.service import (
    EvaluateAttemptInput,
    EvaluateAttemptOutput,
    ScoreRunInput,
    ScoreRunOutput,
    ServiceClient,
    ServiceTarget,
    Sleep,
    grade_attempt,
    score_lane,
)
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings

__all__ = ["ServiceActivities"]


@asynccontextmanager
async def _wait_as_asked() -> AsyncIterator[None]:
    """Let Temporal wait as long as the service asked (a 429 with a long Retry-After)."""
    try:
        yield
    except ServiceError as exc:
        if type(exc) is not ServiceError or exc.retry_after_s is None:
            raise
        raise ApplicationError(
            str(exc), type="ServiceError", next_retry_delay=timedelta(seconds=exc.retry_after_s)
        ) from exc


class ServiceActivities:
    """Grading through a service; built in ``worker.py`` with the worker's settings."""

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: Sleep = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.secrets = KnownSecrets(settings.accounts_file)
        self._sleep = sleep
        self._transport = transport

    def _client(self, target: ServiceTarget) -> ServiceClient:
        return ServiceClient.for_target(target, sleep=self._sleep, transport=self._transport)

    @activity.defn(name="evaluate_attempt")
    @scrubbed
    async def evaluate_attempt(self, data: EvaluateAttemptInput) -> EvaluateAttemptOutput:
        """Grade one recorded attempt (see :func:`durabench.service.grade_attempt`)."""
        detail = f"grading {data.task_id} {data.lane} attempt {data.attempt}"
        run = RunPaths.for_run(self.settings.runs_dir, data.run_id)
        attempt = run.attempt(data.task_id, data.lane, data.attempt)
        async with _wait_as_asked(), heartbeating(detail), self._client(data.service) as client:
            await asyncio.to_thread(pull, self.settings, run, attempt)
            graded = await grade_attempt(self.settings.runs_dir, data, client)
            await asyncio.to_thread(push, self.settings, run, attempt)
            return graded

    @activity.defn(name="score_run")
    @scrubbed
    async def score_run(self, data: ScoreRunInput) -> ScoreRunOutput:
        """Score one lane from its stored gradings (see :func:`durabench.service.score_lane`)."""
        detail = f"scoring {data.lane} of {data.run_id}"
        async with _wait_as_asked(), heartbeating(detail), self._client(data.service) as client:
            run = await asyncio.to_thread(pulled, self.settings, data.run_id)
            scored = await score_lane(self.settings.runs_dir, data, client)
            await asyncio.to_thread(push, self.settings, run, Path(scored.score_path))
            return scored
