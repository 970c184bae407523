"""Grading an attempt and scoring a lane through the service, legacy or v1 alike.

The activities read and write files; this module only decides what to send and turns the
service's answer into a :class:`~durabench.service.records.TaskGrade` or
:class:`~durabench.service.records.RunScore`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from durabench import __version__
from durabench.errors import ServiceAuthError, ServiceRejected, ServiceUnsupported
from durabench.models.verdict import ExitClass
from durabench.service.client import ServiceClient
from durabench.service.payloads import ServiceTarget
from durabench.service.records import RunScore, TaskGrade
from durabench.service.status import generation_status, ungraded_status
from durabench.service.wire import (
    EvaluateResponseRequest,
    FinalScoreRequest,
    FinalScoreResponse,
)
from durabench.service.wire_v1 import (
    V1EvalRequest,
    V1Payload,
    V1ScoreRequest,
    V1ScoreResponse,
    V1UploadRequest,
)

__all__ = ["Generation", "failed_grade", "final_score", "grade", "service_run_id"]


class Generation(NamedTuple):
    """One recorded attempt, as grading needs it."""

    run_id: str
    task_id: str
    lane: str
    """The lane config name."""
    attempt: int
    """Attempt number."""
    exit_class: ExitClass
    """How the attempt ended."""
    response: str
    """The agent's answer."""
    artifact: bytes | None = None
    """The file an artifact payload uploads; ``None`` when the attempt left none."""
    artifact_name: str = ""
    """Its file name."""
    answer_source: str = "final message"
    """Where ``response`` was read from, as a "no answer" note names it."""


def service_run_id(run_id: str, lane: str) -> str:
    """The run id the service sees: one per lane.

    The two lanes' gradings of a task are then two runs to it: not a 409 "already grading",
    not one run mixing two configs.
    """
    return f"{run_id}.{lane}"


async def grade(client: ServiceClient, target: ServiceTarget, gen: Generation) -> TaskGrade:
    """Grade one attempt; a generation that did not finish is not sent.

    A refusal that concerns this task only (a 400 or 404 naming it) becomes an ``error``
    grading, so one bad task does not stop a run; refused keys and missing endpoints
    concern every task and are raised.

    Raises:
        ServiceAuthError: the key is missing or not allowed.
        ServiceUnsupported: the service lacks the endpoint.
        ServiceError: the service stayed busy or down, or answered out of protocol.
    """
    base = _base(gen, target)
    skipped = ungraded_status(base.generation_status)
    if skipped is not None:
        return base.model_copy(update={"status": skipped})
    if target.payload_type == "text" and not gen.response.strip():
        said = f"no answer: the attempt left no {gen.answer_source}, so nothing was sent"
        return base.model_copy(update={"note": said, "errors": (said,)})
    try:
        if target.api == "v1":
            return await _grade_v1(client, target, gen, base)
        data = await client.evaluate_response(
            EvaluateResponseRequest(
                task_id=gen.task_id, response=gen.response, dataset=target.dataset
            )
        )
    except (ServiceAuthError, ServiceUnsupported):
        raise
    except ServiceRejected as exc:
        return base.model_copy(update={"errors": (str(exc),)})
    return _read(
        base.model_copy(
            update={"status": "evaluated", "result": data, "evaluator_version": data.eval_version}
        ),
        target,
    )


def _base(gen: Generation, target: ServiceTarget) -> TaskGrade:
    return TaskGrade(
        run_id=gen.run_id,
        task_id=gen.task_id,
        lane=gen.lane,
        attempt=gen.attempt,
        exit_class=gen.exit_class,
        generation_status=generation_status(gen.exit_class),
        api=target.api,
        status="error",
        scale=target.scale,
    )


def failed_grade(gen: Generation, target: ServiceTarget, why: str) -> TaskGrade:
    """The record of a grading that could not be done, for the report and a later retry."""
    return _base(gen, target).model_copy(update={"failed": why})


def _read(graded: TaskGrade, target: ServiceTarget) -> TaskGrade:
    """``graded`` read on its scale: the result's ``max_score``, else ``--service-scale``.

    A grading without ``pass_percentage``, or with one off the scale, keeps what the service
    said and gets a note instead of a reward.
    """
    result = graded.result
    if result is None:
        return graded
    scale = result.max_score if result.max_score and result.max_score > 0 else target.scale
    graded = graded.model_copy(update={"scale": scale})
    if result.pass_percentage is None:
        note = "the service sent no pass_percentage: graded, reward unknown"
    elif not 0.0 <= result.pass_percentage <= scale:
        said = "the result's max_score" if scale != target.scale else "--service-scale"
        note = (
            f"pass_percentage {result.pass_percentage:g} is outside the scale 0 to {scale:g} "
            f"({said}); no reward is read from it. Set --service-scale to the service's "
            "scale and grade again (python -m starter score --force)"
        )
    else:
        return graded
    return graded.model_copy(update={"note": note})


async def _payload(
    client: ServiceClient, target: ServiceTarget, gen: Generation
) -> V1Payload | str:
    """The answer text, or the key of the artifact just uploaded; a reason when none."""
    if target.payload_type == "text":
        return V1Payload(type="text", payload_schema=target.payload_schema, data=gen.response)
    if gen.artifact is None:
        return f"the attempt left no {target.artifact_file} to upload as its artifact"
    upload = await client.upload_url(
        V1UploadRequest(
            run_id=service_run_id(gen.run_id, gen.lane),
            task_id=gen.task_id,
            dataset=target.dataset,
            filename=gen.artifact_name,
        )
    )
    await client.put_artifact(upload, gen.artifact)
    return V1Payload(type="artifact", payload_schema=target.payload_schema, data=upload.key)


async def _grade_v1(
    client: ServiceClient, target: ServiceTarget, gen: Generation, base: TaskGrade
) -> TaskGrade:
    payload = await _payload(client, target, gen)
    if isinstance(payload, str):
        return base.model_copy(update={"errors": (payload,)})
    answer = await client.evaluate(
        V1EvalRequest(
            run_id=service_run_id(gen.run_id, gen.lane),
            task_id=gen.task_id,
            dataset=target.dataset,
            payload=payload,
            versions={"runner": __version__},
        )
    )
    graded = base.model_copy(
        update={
            "status": answer.status,
            "result": answer.result,
            "errors": answer.errors,
            "evaluator_version": answer.evaluator_version,
        }
    )
    return _read(graded, target)


async def final_score(
    client: ServiceClient,
    target: ServiceTarget,
    run_id: str,
    lane: str,
    grades: Mapping[str, TaskGrade | None],
) -> RunScore:
    """Score a lane: every planned task is sent, those without a grading as ``null``.

    Raises:
        ServiceError: the service refused, stayed busy or answered out of protocol.
    """
    missing = tuple(task_id for task_id, g in grades.items() if g is None)
    answer: V1ScoreResponse | FinalScoreResponse
    if target.api == "v1":
        answer = await client.score(
            V1ScoreRequest(
                run_id=service_run_id(run_id, lane),
                dataset=target.dataset,
                evaluation_results={t: None if g is None else g.v1() for t, g in grades.items()},
            )
        )
    else:
        results = {t: None if g is None else g.legacy() for t, g in grades.items()}
        answer = await client.final_score(
            FinalScoreRequest(evaluation_results=results, dataset=target.dataset)
        )
    return RunScore(
        run_id=run_id,
        lane=lane,
        api=target.api,
        final_score=answer.final_score,
        tasks_evaluated=answer.tasks_evaluated,
        tasks_missing=missing,
        metadata=answer.metadata,
    )
