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

from activities.heartbeat import heartbeating
from durabench.errors import ConfigError, ServiceError
from durabench.models import AttemptResult, RunPlan
from durabench.paths import RunPaths
from durabench.results_io import atomic_write
from durabench.service import (
    EvaluateAttemptInput,
    EvaluateAttemptOutput,
    Generation,
    ScoreRunInput,
    ScoreRunOutput,
    ServiceClient,
    ServiceTarget,
    Sleep,
    TaskGrade,
    final_score,
    grade,
    grade_path,
    load_grades,
    pick_grades,
    score_path,
    service_auth_from_env,
    ungraded_status,
)
from durabench.settings import Settings

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


def _output(stored: TaskGrade, path: Path, graded: bool) -> EvaluateAttemptOutput:
    return EvaluateAttemptOutput(
        generation_status=stored.generation_status,
        status=stored.status,
        graded=graded,
        pass_percentage=None if stored.result is None else stored.result.pass_percentage,
        eval_path=str(path),
    )


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
        self._sleep = sleep
        self._transport = transport

    def _client(self, target: ServiceTarget) -> ServiceClient:
        return ServiceClient(
            target.url,
            service_auth_from_env(),
            retry=target.retry,
            sleep=self._sleep,
            transport=self._transport,
        )

    @activity.defn(name="evaluate_attempt")
    async def evaluate_attempt(self, data: EvaluateAttemptInput) -> EvaluateAttemptOutput:
        """Grade one recorded attempt and write its ``eval.json``; a stored one is reused.

        Raises:
            ConfigError: the attempt has no ``result.json``, or ``response_file`` leaves it.
            ServiceError: the service refused the key or the endpoint, or stayed down.
        """
        run = RunPaths.for_run(self.settings.runs_dir, data.run_id)
        path = grade_path(run, data.task_id, data.lane, data.attempt)
        if path.exists() and not data.force:
            return _output(TaskGrade.model_validate_json(path.read_text()), path, graded=False)
        gen = self._generation(data, run.attempt(data.task_id, data.lane, data.attempt))
        detail = f"grading {data.task_id} {data.lane} attempt {data.attempt}"
        async with _wait_as_asked(), heartbeating(detail), self._client(data.service) as client:
            stored = await grade(client, data.service, gen)
        atomic_write(path, stored.model_dump_json(indent=2))
        return _output(stored, path, graded=ungraded_status(stored.generation_status) is None)

    def _generation(self, data: EvaluateAttemptInput, attempt_dir: Path) -> Generation:
        result_file = attempt_dir / "result.json"
        if not result_file.is_file():
            raise ConfigError(
                f"{data.task_id} {data.lane} attempt {data.attempt} of run {data.run_id} has "
                f"no {result_file}; check the run id, or run the attempt first"
            )
        result = AttemptResult.model_validate_json(result_file.read_text())
        response = result.last_message
        if data.service.response_file is not None:
            answer = (attempt_dir / data.service.response_file).resolve()
            if not answer.is_relative_to(attempt_dir.resolve()):
                raise ConfigError(
                    f"response_file {data.service.response_file!r} leaves the attempt "
                    "directory; name a file inside it, such as submission.patch"
                )
            response = answer.read_text(errors="replace") if answer.is_file() else ""
        return Generation(
            run_id=data.run_id,
            task_id=data.task_id,
            lane=data.lane,
            attempt=data.attempt,
            exit_class=result.exit_class,
            response=response,
        )

    @activity.defn(name="score_run")
    async def score_run(self, data: ScoreRunInput) -> ScoreRunOutput:
        """Score one lane from its stored gradings; write ``final_score.<lane>.json``.

        Raises:
            ConfigError: the run has no ``plan.json``.
            ServiceError: the service refused, stayed down or answered out of protocol.
        """
        run = RunPaths.for_run(self.settings.runs_dir, data.run_id)
        if not run.plan.is_file():
            raise ConfigError(
                f"run {data.run_id} has no {run.plan}; check the run id and DURABENCH_HOME"
            )
        plan = RunPlan.model_validate_json(run.plan.read_text())
        stored = await asyncio.to_thread(load_grades, run, data.lane)
        grades = pick_grades((t.task_id for t in plan.tasks), stored)
        detail = f"scoring {data.lane} of {data.run_id}"
        async with _wait_as_asked(), heartbeating(detail), self._client(data.service) as client:
            score = await final_score(client, data.service, data.run_id, data.lane, grades)
        target = score_path(run, data.lane)
        atomic_write(target, score.model_dump_json(indent=2))
        return ScoreRunOutput(
            lane=data.lane,
            final_score=score.final_score,
            tasks_graded=len(grades) - len(score.tasks_missing),
            tasks_missing=len(score.tasks_missing),
            score_path=str(target),
        )
