"""The benchmark service's v1 wire shapes (``/v1/evaluate``, ``/v1/score``, dataset tasks).

v1 differs from the legacy API in carrying the run id, a typed payload and a list of
errors per task; its statuses are the legacy ones.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durabench.service.wire import EvalResultData, EvalStatus, PayloadType

__all__ = [
    "V1DatasetTask",
    "V1DatasetTasks",
    "V1EvalRequest",
    "V1EvalResponse",
    "V1Payload",
    "V1ScoreRequest",
    "V1ScoreResponse",
    "V1TaskEval",
    "V1Upload",
    "V1UploadRequest",
]


class V1Payload(BaseModel):
    """What is graded: the answer text, or the key of an uploaded artifact."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    type: PayloadType
    """``text`` or ``artifact``."""
    payload_schema: str = Field(alias="schema")
    """The payload schema the dataset expects, such as ``fabv2.text.v1``."""
    data: str
    """The answer text, or the artifact key."""


class V1EvalRequest(BaseModel):
    """Body of ``POST /v1/evaluate``."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run; the service refuses a second grading of the same run and task with 409."""
    task_id: str
    dataset: str | None = None
    """Dataset name; left out when ``None``."""
    payload: V1Payload
    """What is graded."""
    versions: dict[str, str] = Field(default_factory=dict)
    """Versions of the client's parts, such as ``{"runner": "0.1.0"}``."""


class V1EvalResponse(BaseModel):
    """Answer of ``POST /v1/evaluate``."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    task_id: str
    status: EvalStatus
    """How grading ended."""
    evaluator_version: str | None = None
    """Version of the grader."""
    result: EvalResultData | None = None
    """The grader's answer, when ``status`` is ``evaluated``."""
    errors: tuple[JsonValue, ...] = ()
    """What went wrong, as the service reports it."""


class V1TaskEval(BaseModel):
    """One task's grading inside ``POST /v1/score``."""

    model_config = ConfigDict(frozen=True)

    status: EvalStatus
    """How grading ended."""
    result: EvalResultData | None = None
    """The grader's answer."""
    errors: tuple[JsonValue, ...] = ()
    """What went wrong."""


class V1ScoreRequest(BaseModel):
    """Body of ``POST /v1/score``; a task with no grading is ``null``, never left out."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    dataset: str | None = None
    """Dataset name; left out when ``None``."""
    evaluation_results: dict[str, V1TaskEval | None]
    """Task id to its grading, or ``None``."""


class V1ScoreResponse(BaseModel):
    """Answer of ``POST /v1/score``."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    tasks_evaluated: tuple[str, ...]
    """Task ids the score covers."""
    final_score: float
    """The run's score."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    """Benchmark-specific details of the score."""


class V1DatasetTask(BaseModel):
    """One task of a dataset the service hosts; benchmarks add their own fields."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    """Task id."""
    question: str | None = None
    """The task's prompt, for text tasks."""
    timeout: float | None = None
    """The agent's time limit in seconds, when the dataset sets one."""


class V1DatasetTasks(BaseModel):
    """Answer of ``GET /v1/datasets/{name}/tasks``."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    dataset_version: str | None = None
    tasks: tuple[V1DatasetTask, ...]
    """Its tasks."""


class V1UploadRequest(BaseModel):
    """Body of ``POST /v1/submissions/upload-url``: where an artifact will be put."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run (one per lane, as in evaluate)."""
    task_id: str
    dataset: str | None = None
    """Dataset name; left out when ``None``."""
    filename: str
    """The artifact's file name."""


class V1Upload(BaseModel):
    """Answer of ``POST /v1/submissions/upload-url``: a presigned PUT and the key to grade."""

    model_config = ConfigDict(frozen=True)

    key: str
    """What ``/v1/evaluate`` grades (``payload.data`` of an artifact payload)."""
    url: str
    """Presigned URL the artifact is PUT to; it carries its own authorization."""
    expires_in: float | None = None
    """Seconds the URL stays valid."""
