"""Inputs and outputs of the service activities: which service, which attempt, what came back.

They travel through Temporal history, so they hold a URL, names and numbers: never a key
(keys are read from the worker's environment inside the activity) and never an answer text
(the activity reads it from the attempt's directory).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from durabench.service.models import EvalStatus, GenerationStatus
from durabench.service.retry import ServiceRetry

__all__ = [
    "EvaluateAttemptInput",
    "EvaluateAttemptOutput",
    "ScoreRunInput",
    "ScoreRunOutput",
    "ServiceApi",
    "ServiceTarget",
]

ServiceApi = Literal["legacy", "v1"]
"""``legacy`` (``/evaluate-response/``, ``/final-score/``) or ``v1`` (``/v1/...``)."""


class ServiceTarget(BaseModel):
    """The benchmark service a run is graded by, and how to talk to it."""

    model_config = ConfigDict(frozen=True)

    url: str
    """Base URL (``--service-url``), such as ``http://127.0.0.1:8000``; no credentials."""
    api: ServiceApi = "legacy"
    """Which endpoints to use; v1 needs ``VALS_AUTH_KEY``."""
    dataset: str | None = None
    """Dataset name sent with every request (``--dataset-name``), for multi-dataset services."""
    payload_schema: str = ""
    """v1 only: the dataset's text payload schema, such as ``fabv2.text.v1``."""
    response_file: str | None = None
    """A file in the attempt directory whose text is the answer (``None``: the agent's final
    message from ``result.json``, which keeps at most 2,000 characters)."""
    retry: ServiceRetry = Field(default_factory=ServiceRetry)
    """How hard each call is retried inside one activity attempt."""

    @field_validator("url")
    @classmethod
    def _plain_http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http(s) URL; pass --service-url http://host:port")
        if parts.username or parts.password:
            raise ValueError(
                "the service URL carries credentials; put the key in VALS_AUTH_KEY or "
                "BENCHMARK_API_KEY on the worker instead"
            )
        return url.rstrip("/")

    @model_validator(mode="after")
    def _v1_needs_schema(self) -> ServiceTarget:
        if self.api == "v1" and not self.payload_schema:
            raise ValueError(
                "the v1 API needs payload_schema (the dataset's schema, e.g. fabv2.text.v1)"
            )
        return self


class EvaluateAttemptInput(BaseModel):
    """Input of ``evaluate_attempt``: grade one recorded attempt."""

    model_config = ConfigDict(frozen=True)

    service: ServiceTarget
    """Where to grade."""
    run_id: str
    """The run."""
    task_id: str
    """The task."""
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
    """The lane."""
    final_score: float
    """The service's score."""
    tasks_graded: int
    """Tasks sent with a grading."""
    tasks_missing: int
    """Tasks sent as ``null`` (no grading: not run, or only infra attempts)."""
    score_path: str
    """The lane's ``final_score.<lane>.json``."""
