"""What a run produces: per attempt, per pair, per run. Persisted files carry a version."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.run import Approval, RunPlan
from durabench.models.scorecard import Scorecard
from durabench.models.verdict import ExitClass, Signals, TokenUsage, is_infra

__all__ = [
    "AttemptResult",
    "LaneSummary",
    "Phase",
    "PairResult",
    "PhaseTiming",
    "RunResult",
]

Phase = Literal[
    "prepare_image",
    "provision_sandbox",
    "run_agent",
    "verify",
    "classify_attempt",
    "collect_artifacts",
]
"""The phases of an attempt, in order (named as their activities)."""


class PhaseTiming(BaseModel):
    """Start and end of one phase, from ``workflow.now()``."""

    model_config = ConfigDict(frozen=True)

    phase: Phase
    started_at: datetime
    """When the phase started."""
    finished_at: datetime
    """When it ended."""


class AttemptResult(BaseModel):
    """One agent run in one lane of one task (``result.json``, schema 2)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 2
    """Format version of this file (2: exit classes replace statuses)."""
    run_id: str
    task_id: str
    lane: str
    """The lane config name."""
    attempt: int
    """Attempt number, from 1; a retried infra attempt keeps its record."""
    exit_class: ExitClass
    """How the attempt ended (see :mod:`durabench.classify`)."""
    reason: str = ""
    """Why, in a sentence a person can check."""
    reward: float | None = None
    """Verifier reward; ``None`` when the verifier produced none."""
    verifier_error: str = ""
    """Why the verifier produced no reward, when it did not."""
    agent: str
    """Agent adapter."""
    model: str
    """Requested model."""
    served_model: str | None = None
    """The model the gateway metered answering; ``None`` when the API served no answer
    (the reason says why), or, for an agent without a gateway, the transcript's word."""
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens used."""
    cost_usd: float | None = None
    """What the attempt cost in USD: the gateway's metered tokens at the run's prices
    (``run.json``'s plan); ``None`` when unpriced (``unpriced_model``) or, without a
    gateway, when the agent reported no cost."""
    cli_cost_usd: float | None = None
    """The cost the agent CLI printed, if it did: a cross-check, never the figure used
    (the reason names a difference)."""
    unpriced_model: str = ""
    """A model the attempt used tokens of that the run's prices do not cover."""
    signals: Signals = Field(default_factory=Signals)
    """What the agent's last message says about its work."""
    last_message: str = ""
    """The start of the agent's final message (2,000 characters), for display; the whole is
    ``final_message.txt`` in the attempt's directory, which a service grades."""
    classifier_version: int | None = None
    """Version of the pattern table that classified the attempt."""
    image: str = ""
    """The image the agent ran in (the task image, or it with the CLI installed)."""
    task_image_id: str = ""
    """The task image's id (``sha256:...``); empty in results from before it was kept."""
    agent_image_id: str = ""
    """The id of the image the agent ran in; empty in results from before it was kept."""
    cli_version: str | None = None
    """The agent CLI version that ran: its transcript's word, else ``<cli> --version`` in
    the sandbox; ``None`` for an agent that is no CLI or a CLI that named none."""
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
    wall_seconds: float = 0.0
    """How long the agent ran."""
    agent_reattached: bool = False
    """The worker died while the agent ran; a new one waited for the same session."""
    session_began: bool = False
    """An ``infra_other`` of the harness's own that came after the agent's session was
    launched (the tests could not be run, the session could not be read or judged before
    the deadline): the session may have run to its end, paid for, so the pair does not
    retry the attempt, which a retry would pay for again. Excluded like every ``infra_*``
    attempt; ``starter run --rerun infra`` runs it again if you choose."""
    files_changed: int = 0
    """Files the agent changed in the workspace."""
    build_failed: bool = False
    """Whether the task's build command failed after the agent."""
    timings: tuple[PhaseTiming, ...] = ()
    """Each phase's start and end."""
    hosts: tuple[str, ...] = ()
    """Worker hosts the attempt's container work ran on, in order: more than one means its
    host disappeared and the attempt started over on another."""
    account: str | None = None
    """The agent account it ran on (its id; the secret is never kept)."""
    cap_resets_at: datetime | None = None
    """For ``infra_usage_cap``: when the account's cap resets (its cooldown ends)."""
    left_out: tuple[str, ...] = ()
    """What the worker's read limits left out of the sandbox's files (a file too large, too
    many files), in words: the attempt's logs or diff are incomplete by that much."""
    durabench_version: str | None = None
    """The durabench of the worker that wrote ``result.json`` (``None``: written before
    versions were recorded)."""

    @property
    def infra(self) -> bool:
        """An infrastructure failure: retried, never scored."""
        return is_infra(self.exit_class)

    @property
    def included(self) -> bool:
        """Counts in Best/Mean: a model data point whose tests ran."""
        return not self.infra and self.reward is not None


class PairResult(BaseModel):
    """Both lanes of one task, as the paired workflow returns them."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    attempts: tuple[AttemptResult, ...]
    """Every attempt of every lane, retries included."""
    excluded: bool = False
    """An arm exhausted its infra retries: the pair is not scored."""
    exclusion_reason: str = ""
    """Which arm, and its last infra class."""


class LaneSummary(BaseModel):
    """Totals of one lane over the run."""

    model_config = ConfigDict(frozen=True)

    lane: str
    """Lane config name."""
    attempts: int
    """Attempts recorded, retries included."""
    scored: int
    """Attempts included in the mean (model data points whose tests ran)."""
    mean_reward: float | None
    """Mean reward over scored attempts."""
    passed: int
    """Scored attempts with reward 1.0."""
    by_class: dict[str, int]
    """Attempts per exit class."""


class RunResult(BaseModel):
    """Everything a run produced (``results.json``)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 3
    """Format version of this file (2: exit classes, excluded pairs; 3: scorecard)."""
    plan: RunPlan
    """The approved plan."""
    approval: Approval | None
    """Who approved, and when."""
    attempts: tuple[AttemptResult, ...]
    """Every attempt recorded."""
    excluded: dict[str, str] = Field(default_factory=dict)
    """Excluded pairs: task id to the reason."""
    lanes: tuple[LaneSummary, ...]
    """Totals per lane."""
    scorecard: Scorecard | None = None
    """Best/Mean per cell, exclusions, the paired comparison, token and cost totals."""
    service_scores: dict[str, float] = Field(default_factory=dict)
    """Lane to the benchmark service's final score, for a run graded by a service."""
    durabench_version: str | None = None
    """The durabench that built this file (``None``: built before versions were recorded)."""
