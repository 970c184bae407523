"""Which benchmark service grades a run, and how hard its client retries.

These travel in the run's request through Temporal history: a URL, names and numbers, never
a key (keys are read from the worker's environment inside the activity). The client and
the grading live in :mod:`durabench.service`.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from durabench.errors import ConfigError
from durabench.settings.urls import check_service_url

__all__ = ["PayloadKind", "ServiceApi", "ServiceRetry", "ServiceTarget"]


class ServiceRetry(BaseModel):
    """How hard the client tries before it gives up; small values suit tests."""

    model_config = ConfigDict(frozen=True)

    max_attempts: int = Field(default=5, ge=1)
    """Requests per call, the first included."""
    backoff_s: float = Field(default=1.0, ge=0)
    """Wait after the first failure of a 5xx, timeout or lost connection; doubles after."""
    backoff_max_s: float = Field(default=30.0, ge=0)
    """The longest backoff wait."""
    conflict_wait_s: float = Field(default=5.0, ge=0)
    """Wait after a 409 (the service is still grading the same task) with no Retry-After."""
    retry_after_max_s: float = Field(default=120.0, ge=0)
    """The longest Retry-After the client sleeps through; a longer one goes to Temporal."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Time limit of one request (grading can be slow)."""


ServiceApi = Literal["legacy", "v1"]
"""``legacy`` (``/evaluate-response/``, ``/final-score/``) or ``v1`` (``/v1/...``)."""

PayloadKind = Literal["text", "artifact"]
"""What v1 grades: the answer text, or a file uploaded first (``--payload-type``)."""

DEFAULT_ARTIFACT = "submission.patch"
"""The file an artifact payload uploads unless ``response_file`` names another."""


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
    """v1 only: the dataset's payload schema, such as ``fabv2.text.v1``."""
    payload_type: PayloadKind = "text"
    """v1 only: ``artifact`` uploads a file of the attempt (``/v1/submissions/upload-url``)
    and grades it by its key; ``text`` sends the answer in the request."""
    response_file: str | None = None
    """A file in the attempt directory whose text is the answer, or the artifact to upload
    (``None``: the agent's whole final message, ``final_message.txt``; for an artifact,
    ``submission.patch``, the diff the agent left)."""
    scale: float = Field(default=100.0, gt=0)
    """``--service-scale``: the value of a full pass, for results that do not say (their
    ``max_score``); a reward is ``pass_percentage / scale``, refused outside 0 to 1."""
    retry: ServiceRetry = Field(default_factory=ServiceRetry)
    """How hard each call is retried inside one activity attempt."""

    @field_validator("url")
    @classmethod
    def _plain_http_url(cls, url: str) -> str:
        parts = urlsplit(url)
        try:
            check_service_url(url)
        except ConfigError as exc:  # pydantic reports ValueErrors as the field's error
            raise ValueError(str(exc)) from None
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
        if self.payload_type == "artifact" and self.api != "v1":
            raise ValueError("artifact payloads need the v1 API: add --service-api v1")
        return self

    def calls(self, lists_tasks: bool = False) -> str:
        """Which endpoint each step uses, in words; listing a dataset is a v1 call always."""
        if self.api == "v1":
            artifact = self.payload_type == "artifact"
            upload = " after POST /v1/submissions/upload-url" if artifact else ""
            steps = [f"grades by POST /v1/evaluate{upload}", "scores by POST /v1/score"]
        else:
            steps = ["grades by POST /evaluate-response/", "scores by POST /final-score/"]
        if lists_tasks:
            steps.insert(0, f"lists tasks by GET /v1/datasets/{self.dataset}/tasks (v1)")
        return f"{self.api} API: " + "; ".join(steps)

    @property
    def artifact_file(self) -> str:
        """The attempt file an artifact payload uploads."""
        return self.response_file or DEFAULT_ARTIFACT
