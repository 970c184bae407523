"""Gradings and scores as kept in the run directory, so a run is re-scored without agents.

::

    <home>/runs/<run_id>/
    ├── final_score.<lane>.json         RunScore: the service's final score of one lane
    └── tasks/<task_id>/<lane>/attempt-<n>/
        ├── result.json                 the attempt (exit class, final message)
        └── eval.json                   TaskGrade: how the service graded it
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durabench.models.verdict import ExitClass, is_infra
from durabench.service.payloads import ServiceApi
from durabench.service.wire import EvalResult, EvalResultData, EvalStatus, GenerationStatus
from durabench.service.wire_v1 import V1TaskEval
from durabench.settings.paths import RunPaths

__all__ = ["RunScore", "TaskGrade", "grade_path", "load_grades", "pick_grades", "score_path"]


class TaskGrade(BaseModel):
    """How the service graded one attempt (``eval.json``, schema 1)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    """Format version of this file."""
    run_id: str
    task_id: str
    lane: str
    """The lane config name."""
    attempt: int
    """Attempt number."""
    exit_class: ExitClass
    """The attempt's exit class."""
    generation_status: GenerationStatus
    """``exit_class`` in the service's words."""
    api: ServiceApi
    """Which API graded it."""
    status: EvalStatus
    """How grading ended."""
    result: EvalResultData | None = None
    """The grader's answer."""
    errors: tuple[JsonValue, ...] = ()
    """What went wrong, as the service said it (or why durabench did not send it)."""
    evaluator_version: str | None = None
    """Version of the grader."""
    scale: float = Field(default=100.0, gt=0, allow_inf_nan=False)
    """The value of a full pass ``result`` was read on: its ``max_score``, else
    ``--service-scale``."""
    note: str = ""
    """Why no reward is read from this grading (no ``pass_percentage``, a value off the
    scale), or that nothing was sent (no answer); empty when the reward stands."""
    failed: str = ""
    """Why grading could not be done (the service refused or stayed down): then this is no
    grading, the task is scored as missing and ``starter score`` grades it again."""

    @property
    def reward(self) -> float | None:
        """``pass_percentage`` on 0 to 1; ``None`` when unknown or off the scale."""
        if self.failed or self.result is None or self.result.pass_percentage is None:
            return None
        if not self.scale > 0:  # a hand-made file: the model refuses it when read
            return None
        reward = self.result.pass_percentage / self.scale
        return reward if 0.0 <= reward <= 1.0 else None

    @property
    def error_text(self) -> str:
        """``errors`` in one line."""
        return "; ".join(e if isinstance(e, str) else json.dumps(e) for e in self.errors)

    def legacy(self) -> EvalResult:
        """This grading as a legacy ``/final-score/`` entry."""
        error = self.error_text
        return EvalResult(
            task_id=self.task_id, status=self.status, result=self.result, error=error or None
        )

    def v1(self) -> V1TaskEval:
        """This grading as a ``/v1/score`` entry."""
        return V1TaskEval(status=self.status, result=self.result, errors=self.errors)


class RunScore(BaseModel):
    """The service's final score of one lane (``final_score.<lane>.json``, schema 1)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    """Format version of this file."""
    run_id: str
    lane: str
    """The lane config name."""
    api: ServiceApi
    """Which API scored it."""
    final_score: float
    """The service's score."""
    tasks_evaluated: tuple[str, ...]
    """Task ids the service says the score covers."""
    tasks_missing: tuple[str, ...] = ()
    """Tasks sent as ``null``: never graded, or only infra attempts."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    """The service's details of the score."""

    @property
    def complete(self) -> bool:
        """Every planned task had a grading."""
        return not self.tasks_missing


def grade_path(run: RunPaths, task_id: str, lane: str, attempt: int) -> Path:
    """An attempt's ``eval.json``."""
    return run.attempt(task_id, lane, attempt) / "eval.json"


def score_path(run: RunPaths, lane: str) -> Path:
    """A lane's ``final_score.<lane>.json``."""
    return run.root / f"final_score.{lane}.json"


def load_grades(run: RunPaths, lane: str) -> list[TaskGrade]:
    """Every stored grading of ``lane`` in the run."""
    files = run.attempt_files("eval.json", lane)
    return [TaskGrade.model_validate_json(f.read_text()) for f in files]


def pick_grades(
    task_ids: Iterable[str], grades: Iterable[TaskGrade]
) -> dict[str, TaskGrade | None]:
    """The grading each task is scored by: its last non-infra attempt, else ``None``.

    Infra attempts say nothing about the model, so they never score, and a failed grading
    is no grading; a task without any other attempt is sent as ``null`` (missing), as the
    protocol asks.
    """
    latest: dict[str, TaskGrade] = {}
    for grade in grades:
        if is_infra(grade.exit_class) or grade.failed:
            continue
        held = latest.get(grade.task_id)
        if held is None or grade.attempt > held.attempt:
            latest[grade.task_id] = grade
    return {task_id: latest.get(task_id) for task_id in task_ids}
