"""Grade a recorded attempt and score a lane from a run directory: files in, files out.

Shared by the service activities (inside a run) and ``starter score`` (a finished run,
graded again without running any agent). What is sent is the attempt's whole final message
(``final_message.txt``; ``result.json`` keeps only a display copy), its ``response_file``,
or the artifact it uploads; what comes back is written beside it.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from durabench.atomic import atomic_write
from durabench.errors import ConfigError, ServiceError
from durabench.models.results import AttemptResult
from durabench.models.run import RunPlan
from durabench.service.client import ServiceClient
from durabench.service.grading import Generation, failed_grade, final_score, grade
from durabench.service.payloads import (
    EvaluateAttemptInput,
    EvaluateAttemptOutput,
    ScoreRunInput,
    ScoreRunOutput,
)
from durabench.service.records import TaskGrade, grade_path, load_grades, pick_grades, score_path
from durabench.service.status import ungraded_status
from durabench.settings.paths import FINAL_MESSAGE, RunPaths

__all__ = ["grade_attempt", "score_lane"]


def _output(stored: TaskGrade, path: Path, graded: bool) -> EvaluateAttemptOutput:
    return EvaluateAttemptOutput(
        eval_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        generation_status=stored.generation_status,
        status=stored.status,
        graded=graded,
        pass_percentage=None if stored.result is None else stored.result.pass_percentage,
        eval_path=str(path),
    )


async def grade_attempt(
    runs_dir: Path, data: EvaluateAttemptInput, client: ServiceClient
) -> EvaluateAttemptOutput:
    """Grade one recorded attempt and write its ``eval.json``; a stored one is reused.

    Raises:
        ConfigError: the attempt has no ``result.json``, or ``response_file`` leaves it.
        ServiceError: the service refused the key or the endpoint, or stayed down; the
            attempt's ``eval.json`` then records why (``failed``), for the report.
    """
    run = RunPaths.for_run(runs_dir, data.run_id)
    path = grade_path(run, data.task_id, data.lane, data.attempt)
    if path.exists() and not data.force:
        kept = TaskGrade.model_validate_json(path.read_text())
        if not kept.failed:
            return _output(kept, path, graded=False)
    gen = _generation(data, run.attempt(data.task_id, data.lane, data.attempt))
    try:
        stored = await grade(client, data.service, gen)
    except ServiceError as exc:  # kept for the report; a failed grading is tried again
        atomic_write(path, failed_grade(gen, data.service, str(exc)).model_dump_json(indent=2))
        raise
    atomic_write(path, stored.model_dump_json(indent=2))
    return _output(stored, path, graded=ungraded_status(stored.generation_status) is None)


def _generation(data: EvaluateAttemptInput, attempt_dir: Path) -> Generation:
    result_file = attempt_dir / "result.json"
    if not result_file.is_file():
        raise ConfigError(
            f"{data.task_id} {data.lane} attempt {data.attempt} of run {data.run_id} has "
            f"no {result_file}; check the run id, or run the attempt first"
        )
    result = AttemptResult.model_validate_json(result_file.read_text())
    service, response, artifact = data.service, result.last_message, None
    source = "final message"
    whole = attempt_dir / FINAL_MESSAGE  # older attempts have only the display copy
    if whole.is_file():
        response = whole.read_text(errors="replace")
    if service.payload_type == "artifact":
        found = _inside(attempt_dir, service.artifact_file)
        artifact = found.read_bytes() if found.is_file() else None
    elif service.response_file is not None:
        answer = _inside(attempt_dir, service.response_file)
        response = answer.read_text(errors="replace") if answer.is_file() else ""
        source = service.response_file
    return Generation(
        run_id=data.run_id,
        task_id=data.task_id,
        lane=data.lane,
        attempt=data.attempt,
        exit_class=result.exit_class,
        response=response,
        artifact=artifact,
        artifact_name=Path(service.artifact_file).name,
        answer_source=source,
    )


def _inside(attempt_dir: Path, name: str) -> Path:
    """``name`` in the attempt directory.

    Raises:
        ConfigError: ``name`` leads out of it.
    """
    path = (attempt_dir / name).resolve()
    if not path.is_relative_to(attempt_dir.resolve()):
        raise ConfigError(
            f"response_file {name!r} leaves the attempt directory; name a file inside it, "
            "such as submission.patch"
        )
    return path


async def score_lane(runs_dir: Path, data: ScoreRunInput, client: ServiceClient) -> ScoreRunOutput:
    """Score one lane from its stored gradings; write ``final_score.<lane>.json``.

    Raises:
        ConfigError: the run has no ``plan.json``.
        ServiceError: the service refused, stayed down or answered out of protocol.
    """
    run = RunPaths.for_run(runs_dir, data.run_id)
    if not run.plan.is_file():
        raise ConfigError(
            f"run {data.run_id} has no {run.plan}; check the run id and DURABENCH_HOME"
        )
    plan = RunPlan.model_validate_json(run.plan.read_text())
    stored = await asyncio.to_thread(load_grades, run, data.lane)
    grades = pick_grades((t.task_id for t in plan.tasks), stored)
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
