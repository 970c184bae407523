"""The benchmark service's statuses and its legacy wire shapes (evaluate-response, final-score).

Field names and enums follow the Vals benchmark runner and service schemas, so a result
written here reads the same as one the reference runner writes.

Named ``wire`` for what it is, the service's HTTP shapes: "models" in durabench are its own
data types (:mod:`durabench.models`), and a model is also the LLM an agent runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durabench.models.benchmark_service import PayloadKind

__all__ = [
    "EvalResult",
    "EvalResultData",
    "EvalStatus",
    "EvaluateResponseRequest",
    "FinalScoreRequest",
    "FinalScoreResponse",
    "GenerationStatus",
    "PayloadType",
]

GenerationStatus = Literal["success", "max_time", "max_turns", "error"]
"""How a generation (one agent run) ended, in the service's words."""

EvalStatus = Literal["evaluated", "did_not_complete", "generation_error", "error"]
"""How the grading of one generation ended."""

PayloadType = PayloadKind
"""What a v1 evaluation receives: the answer text, or the key of an uploaded artifact."""


def _absent(value: object) -> bool:
    """Left out when ``None``: a result is sent back to the service as it came."""
    return value is None


class EvalResultData(BaseModel):
    """What a benchmark's grader returns for one task; benchmarks add their own fields."""

    model_config = ConfigDict(frozen=True, extra="allow")

    pass_percentage: float | None = Field(default=None, exclude_if=_absent)
    """Share of the task's checks that passed, on the service's scale (0 to 100 unless
    ``max_score`` or ``--service-scale`` says otherwise); ``None``: graded, reward unknown."""
    max_score: float | None = Field(default=None, exclude_if=_absent)
    """The value of a full pass, when the grader says (1 for a service that reports 0-1)."""
    eval_version: str | None = None
    """Version of the grader, when it names one."""


class EvalResult(BaseModel):
    """The grading of one task (``eval.json`` in the reference runner)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    status: EvalStatus
    """How grading ended; only ``evaluated`` carries a result."""
    result: EvalResultData | None = None
    """The grader's answer."""
    error: str | None = None
    """Why grading failed, when it did."""


class EvaluateResponseRequest(BaseModel):
    """Body of ``POST /evaluate-response/``."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    response: str
    """The agent's final answer."""
    dataset: str | None = None
    """Dataset name, for services that host several; left out when ``None``."""


class FinalScoreRequest(BaseModel):
    """Body of ``POST /final-score/``.

    Every task of the run is a key: a task with no usable grading is ``null``, so the
    service scores it as missing instead of scoring a smaller run.
    """

    model_config = ConfigDict(frozen=True)

    evaluation_results: dict[str, EvalResult | None]
    """Task id to its grading, or ``None`` when there is none."""
    dataset: str | None = None
    """Dataset name; left out when ``None``."""


class FinalScoreResponse(BaseModel):
    """Answer of ``POST /final-score/``."""

    model_config = ConfigDict(frozen=True)

    tasks_evaluated: tuple[str, ...]
    """Task ids the score covers."""
    final_score: float
    """The run's score, as the benchmark defines it."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    """Benchmark-specific details of the score."""
