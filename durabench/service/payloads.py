"""Inputs and outputs of the service activities: which service, which attempt, what came back.

They travel through Temporal history, so they hold a URL, names and numbers: never a key
(keys are read from the worker's environment inside the activity) and never an answer text
(the activity reads it from the attempt's directory).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from durabench.models.benchmark_service import ServiceApi, ServiceTarget
from durabench.service.wire import EvalStatus, GenerationStatus

__all__ = [
    "EvaluateAttemptInput",
    "EvaluateAttemptOutput",
    "ScoreRunInput",
    "ScoreRunOutput",
    "ServiceApi",
    "ServiceTarget",
]


class EvaluateAttemptInput(BaseModel):
    """Input of ``evaluate_attempt``: grade one recorded attempt."""

    model_config = ConfigDict(frozen=True)

    service: ServiceTarget
    """Where to grade."""
    run_id: str
    task_id: str
    lane: str
    """The lane config name."""
    attempt: int = 1
    """Attempt number; its ``result.json`` must exist."""
    force: bool = False
    """Grade again even when ``eval.json`` exists (``starter score --force``)."""


class EvaluateAttemptOutput(BaseModel):
    """Output of ``evaluate_attempt``; the whole grading is in ``eval_path``."""

    model_config = ConfigDict(frozen=True)

    generation_status: GenerationStatus
    """The attempt's exit class in the service's words."""
    status: EvalStatus
    """How grading ended."""
    graded: bool
    """Whether the service was called now (not for a generation that did not finish, nor
    for a stored grading reused without ``force``)."""
    pass_percentage: float | None = None
    """The grader's pass percentage, when it graded."""
    eval_path: str
    """The attempt's ``eval.json``."""
    eval_sha256: str | None = None
    """The sha256 of that ``eval.json`` as written: history keeps it, so ``starter audit``
    can tell the service's grading from a file planted or edited after it."""


class ScoreRunInput(BaseModel):
    """Input of ``score_run``: the final score of one lane from its stored gradings."""

    model_config = ConfigDict(frozen=True)

    service: ServiceTarget
    """Where to score."""
    run_id: str
    """The run; its ``plan.json`` lists the tasks (missing ones are sent as ``null``)."""
    lane: str
    """The lane config name."""


class ScoreRunOutput(BaseModel):
    """Output of ``score_run``; the service's full answer is in ``score_path``."""

    model_config = ConfigDict(frozen=True)

    lane: str
    final_score: float
    """The service's score."""
    tasks_graded: int
    """Tasks sent with a grading."""
    tasks_missing: int
    """Tasks sent as ``null`` (no grading: not run, or only infra attempts)."""
    score_path: str
    """The lane's ``final_score.<lane>.json``."""
