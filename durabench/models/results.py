"""What a run produces: per attempt, per pair, per run. Persisted files carry a version."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from durabench.models.run import Approval, RunPlan

__all__ = [
    "AttemptResult",
    "AttemptStatus",
    "LaneSummary",
    "PairResult",
    "PhaseTiming",
    "RunResult",
]

AttemptStatus = Literal[
    "completed", "agent_error", "agent_timeout", "verifier_error", "infra_error"
]
"""How an attempt ended. ``infra_error`` attempts never count as model results."""


class PhaseTiming(BaseModel):
    """Start and end of one phase, from ``workflow.now()``."""

    model_config = ConfigDict(frozen=True)

    phase: str
    """Phase name (prepare_image, provision, run_agent, verify, collect)."""
    started_at: datetime
    """When the phase started."""
    finished_at: datetime
    """When it ended."""


class AttemptResult(BaseModel):
    """One agent run in one lane of one task (``result.json``)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    """Format version of this file."""
    run_id: str
    """The run."""
    task_id: str
    """The task."""
    lane: str
    """The lane config name."""
    attempt: int
    """Attempt number, from 1."""
    status: AttemptStatus
    """How the attempt ended."""
    reason: str = ""
    """Why, in a sentence, when it did not complete."""
    reward: float | None = None
    """Verifier reward; ``None`` when the verifier produced none."""
    agent: str
    """Agent adapter."""
    model: str
    """Requested model."""
    image: str = ""
    """Task image tag."""
    dockerfile: str = ""
    """Dockerfile variant the image was built from."""
    instruction_file: str = ""
    """Instruction file the agent was given."""
    mcp_config: bool = False
    """Whether the container got an MCP config file."""
    mcp_env_missing: tuple[str, ...] = ()
    """Environment variables the MCP config names that were unset on the worker."""
    agent_exit_code: int | None = None
    """The agent command's exit code."""
    timed_out: bool = False
    """Whether the agent was killed by its time limit."""
    files_changed: int = 0
    """Files the agent changed in the workspace."""
    timings: tuple[PhaseTiming, ...] = ()
    """Each phase's start and end."""


class PairResult(BaseModel):
    """Both lanes of one task, as the paired workflow returns them."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    """The task."""
    attempts: tuple[AttemptResult, ...]
    """The final attempt of each lane."""


class LaneSummary(BaseModel):
    """Totals of one lane over the run."""

    model_config = ConfigDict(frozen=True)

    lane: str
    """Lane config name."""
    attempts: int
    """Attempts recorded."""
    scored: int
    """Attempts with a reward that are not infra errors."""
    mean_reward: float | None
    """Mean reward over scored attempts."""
    passed: int
    """Scored attempts with reward 1.0."""
    by_status: dict[str, int]
    """Attempts per status."""


class RunResult(BaseModel):
    """Everything a run produced (``results.json``)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    """Format version of this file."""
    plan: RunPlan
    """The approved plan."""
    approval: Approval | None
    """Who approved, and when."""
    attempts: tuple[AttemptResult, ...]
    """Every attempt recorded."""
    lanes: tuple[LaneSummary, ...]
    """Totals per lane."""
