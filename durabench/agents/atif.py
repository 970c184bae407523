"""Harbor's Agent Trajectory Interchange Format (ATIF), the fields durabench writes.

Shaped after Harbor's pydantic models (``src/harbor/models/trajectories/*.py`` in
laude-institute/harbor, RFC ``docs/rfcs/0001-trajectory-format.md``) so ``harbor view`` and
other ATIF tools open an attempt's ``trajectory.json``. Like theirs, every model forbids
unknown fields, steps are numbered from 1, an observation answers only the tool calls of its
own step, and only agent steps carry a model, reasoning, tool calls or metrics. Nothing
newer than ATIF-v1.4 is used, so readers of every released version accept the file.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ATIF_VERSION",
    "AtifAgent",
    "FinalMetrics",
    "Metrics",
    "Observation",
    "ObservationResult",
    "Step",
    "ToolCall",
    "Trajectory",
]

ATIF_VERSION: Literal["ATIF-v1.4"] = "ATIF-v1.4"

_STRICT = ConfigDict(extra="forbid")


class ToolCall(BaseModel):
    """One action of an agent step."""

    model_config = _STRICT

    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class ObservationResult(BaseModel):
    """What one tool call (named by ``source_call_id``) gave back."""

    model_config = _STRICT

    source_call_id: str | None = None
    content: str | None = None


class Observation(BaseModel):
    """The environment's answers to a step's actions."""

    model_config = _STRICT

    results: list[ObservationResult] = Field(default_factory=list)


class Metrics(BaseModel):
    """Tokens and cost of one model call; ``prompt_tokens`` include the cached ones."""

    model_config = _STRICT

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None


class Step(BaseModel):
    """One turn: the user's, the agent's or the system's (a retry, an API error)."""

    model_config = _STRICT

    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    message: str
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    extra: dict[str, Any] | None = None


class AtifAgent(BaseModel):
    """The agent system that made the trajectory."""

    model_config = _STRICT

    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(BaseModel):
    """Totals of the whole trajectory, as the agent CLI reported them."""

    model_config = _STRICT

    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)


class Trajectory(BaseModel):
    """An ATIF document: the agent, its steps in order, the totals."""

    model_config = _STRICT

    schema_version: Literal["ATIF-v1.4"] = ATIF_VERSION
    session_id: str
    agent: AtifAgent
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    extra: dict[str, Any] | None = None

    def to_json(self) -> str:
        """The document as Harbor writes it: absent fields left out, indented."""
        return self.model_dump_json(exclude_none=True, indent=2)
