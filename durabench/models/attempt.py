"""Inputs and outputs of workflows and activities: one model in, one model out.

They travel through Temporal history, so they stay small: paths, ids and numbers,
never transcripts, logs or secrets.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from durabench.models.results import LaneSummary
from durabench.models.run import Approval, PlanSummary, RunRequest, TaskRef
from durabench.models.service import ServiceTarget

__all__ = [
    "AgentRunOutput",
    "ArmProgress",
    "AttemptRef",
    "CarriedState",
    "ClassifyAttemptInput",
    "CollectOutput",
    "HostClaim",
    "PairDone",
    "PairInput",
    "PairProgress",
    "PlanPage",
    "PlanPageInput",
    "PreparedImage",
    "ProgressOutput",
    "ProvisionInput",
    "ProvisionOutput",
    "RecordRunInput",
    "ReportInput",
    "ReportOutput",
    "RunOutcome",
    "RunPhase",
    "SuiteRunInput",
    "VerifyOutput",
]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_.-]+")
"""Characters a Docker container name cannot hold."""


class AttemptRef(BaseModel):
    """Names one attempt: every attempt-level activity takes this (or a model holding it)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run."""
    task: TaskRef
    """The task."""
    lane: str
    """Lane config name."""
    attempt: int = 1
    """Attempt number, from 1."""
    agent: str
    """Agent adapter name."""
    model: str
    """Requested model."""
    agent_options: dict[str, str] = {}
    """Agent options from the run request."""
    service: ServiceTarget | None = None
    """The service that grades the attempt instead of the local verifier."""
    budget_tokens: int | None = None
    """Tokens the attempt may use, enforced by the model gateway; ``None``: no budget."""
    account: str | None = None
    """The account whose secret the agent gets (leased by the pair), or ``None`` for the
    worker's own environment."""
    placement: int = 0
    """How many times the attempt's host disappeared and it started over on another; each
    placement gets its own container, so a host that comes back cannot touch the new one."""

    @property
    def container_name(self) -> str:
        """Deterministic container name, so a retried activity finds its container.

        Readable (run, task, lane, attempt, placement, with characters Docker refuses made
        ``-``) and unique: it ends in a hash of the ids themselves, so neither ``q:1`` and
        ``q-1`` nor run ``a-b`` with task ``c`` and run ``a`` with task ``b-c`` share one.
        """
        raw = f"durabench-{self.run_id}-{self.task.task_id}-{self.lane}-{self.attempt}"
        raw += f"-p{self.placement}" if self.placement else ""
        ids = "\0".join(
            (self.run_id, self.task.task_id, self.lane, str(self.attempt), str(self.placement))
        )
        return f"{_UNSAFE.sub('-', raw)}-{hashlib.sha256(ids.encode()).hexdigest()[:10]}"

    @property
    def labels(self) -> dict[str, str]:
        """Labels put on the attempt's container (the sweeper and tests look for them)."""
        return {
            "durabench.run": self.run_id,
            "durabench.task": self.task.task_id,
            "durabench.lane": self.lane,
            "durabench.attempt": str(self.attempt),
        }


class PairInput(BaseModel):
    """Input of ``PairedTaskWorkflow``."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run."""
    task: TaskRef
    """The task both lanes run."""
    lanes: tuple[str, ...]
    """Lane config names."""
    agent: str
    """Agent adapter name."""
    model: str
    """Requested model."""
    agent_options: dict[str, str] = {}
    """Agent options from the run request."""
    infra_retries: int = 2
    """New attempts an arm gets after an infra attempt."""
    infra_backoff_sec: float = 60.0
    """Wait before the first infra retry; doubles after."""
    service: ServiceTarget | None = None
    """The service that grades the attempts instead of the local verifier."""
    accounts: bool = False
    """Whether each attempt leases a slot of an agent account from the pool first."""
    lease_poll_sec: float = 15.0
    """While every slot of the agent's accounts is in use, how often an arm asks again."""
    budget_tokens: int | None = None
    """Tokens one attempt may use (the run's ``--budget``); ``None``: no budget."""
    paused: bool = False
    """The run was paused when it started the pair (no retry starts until ``resume``)."""
    control_seq: int = 0
    """The run's count of pauses and resumes then (orders the signals the pair gets)."""


class HostClaim(BaseModel):
    """Output of ``claim_host``: the worker host that runs an attempt's container work."""

    model_config = ConfigDict(frozen=True)

    host_id: str
    """The host's id (its containers carry it as the ``durabench.host`` label)."""
    queue: str
    """The host's own task queue."""
    host_timeout_sec: float
    """How long container work may wait on that queue before the attempt moves."""


class PreparedImage(BaseModel):
    """Output of ``prepare_image``."""

    model_config = ConfigDict(frozen=True)

    image: str
    """Image tag, content-addressed."""
    dockerfile: str
    """Dockerfile variant it was built from."""
    task_image_id: str = ""
    """The task image's id (``sha256:...``); empty in histories from before it was kept."""
    agent_image_id: str = ""
    """The id of the image the agent runs in (the task image plus its installed CLI, or
    the task image itself when nothing was installed); empty before it was kept."""


class ProvisionInput(BaseModel):
    """Input of ``provision_sandbox``."""

    model_config = ConfigDict(frozen=True)

    ref: AttemptRef
    """The attempt."""
    image: str
    """Image to start."""


class ProvisionOutput(BaseModel):
    """Output of ``provision_sandbox``."""

    model_config = ConfigDict(frozen=True)

    container_id: str
    """Container id."""
    instruction_file: str
    """Instruction file placed in the container."""
    mcp_config: bool
    """Whether an MCP config file was placed."""
    mcp_env_missing: tuple[str, ...] = ()
    """MCP environment variables that were unset on the worker."""
    cli_version: str | None = None
    """The agent CLI's version as ``<cli> --version`` printed it in the sandbox (a plain
    version token); ``None`` for an agent that is no CLI, or one that printed none."""


class AgentRunOutput(BaseModel):
    """Output of ``run_agent``."""

    model_config = ConfigDict(frozen=True)

    exit_code: int
    """The agent command's exit code."""
    timed_out: bool
    """Whether the time limit killed it."""
    files_changed: int = 0
    """Workspace files the agent changed (its diff is ``submission.patch``)."""
    wall_seconds: float = 0.0
    """How long the agent's commands ran."""
    reattached: bool = False
    """A retried activity found the agent already started and waited for it."""
    cut: tuple[str, ...] = ()
    """What the workspace read for the diff left out (its limits), in words."""


class CollectOutput(BaseModel):
    """Output of ``collect_artifacts``."""

    model_config = ConfigDict(frozen=True)

    cut: tuple[str, ...] = ()
    """What the collection's limits left out, in words."""


class VerifyOutput(BaseModel):
    """Output of ``verify``."""

    model_config = ConfigDict(frozen=True)

    reward: float
    """The verifier's reward."""
    build_failed: bool = False
    """Whether the task's build command failed before the tests ran."""


class ClassifyAttemptInput(BaseModel):
    """Input of ``classify_attempt``: the facts besides the transcript, which stays put."""

    model_config = ConfigDict(frozen=True)

    ref: AttemptRef
    """The attempt (its transcript is read from its sandbox)."""
    exit_code: int
    """The agent's exit code."""
    timed_out: bool
    """Whether the time limit killed it."""
    wall_seconds: float
    """How long it ran."""
    files_changed: int
    """Files it changed."""
    build_failed: bool
    """Whether the workspace failed to build."""


class RecordRunInput(BaseModel):
    """Input of ``record_run``: the approved plan, persisted as ``run.json``."""

    model_config = ConfigDict(frozen=True)

    plan: PlanSummary
    """The plan."""
    approval: Approval
    """The approval."""


class ReportInput(BaseModel):
    """Input of ``write_report``: the plan and attempts are read from the results directory."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run."""
    approval: Approval | None
    """The approval."""


class PlanPageInput(BaseModel):
    """Input of ``plan_page``: a slice of the plan's task list."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run."""
    offset: int
    """First task index."""
    limit: int
    """At most this many tasks."""


class PlanPage(BaseModel):
    """Output of ``plan_page``."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[TaskRef, ...]
    """The tasks of the slice, in plan order."""


class PairDone(BaseModel):
    """Signalled by a pair to its run when it ends (pairs outlive continue-as-new)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    """The task."""
    by_class: dict[str, int]
    """Its attempts per exit class."""
    excluded: bool = False
    """Whether the pair is excluded."""
    cancelled: bool = False
    """The pair was cancelled (with its run); its containers are gone."""


class CarriedState(BaseModel):
    """What a run carries into its next workflow run: small at any suite size."""

    model_config = ConfigDict(frozen=True)

    plan: PlanSummary
    """The plan summary."""
    approval: Approval
    """The approval."""
    next_index: int
    """Index of the next task to start."""
    done: int
    """Pairs finished."""
    by_class: dict[str, int]
    """Finished attempts per exit class."""
    excluded: int
    """Pairs excluded."""
    in_flight: tuple[str, ...]
    """Task ids of pairs still running (they signal their end to the new run)."""
    paused: bool = False
    """The run was paused."""
    control_seq: int = 0
    """Pauses and resumes so far (orders the signals pairs get)."""
    parallel: int | None = None
    """Parallel slots as last set (``None``: as planned)."""
    ended_abnormally: tuple[str, ...] = ()
    """Task ids of pairs that ended without telling the run."""


class SuiteRunInput(BaseModel):
    """Input of ``SuiteRunWorkflow``: a request, and after continue-as-new its state."""

    model_config = ConfigDict(frozen=True)

    request: RunRequest
    """What the operator asked for."""
    carried: CarriedState | None = None
    """State from the previous workflow run of this run."""


class ReportOutput(BaseModel):
    """Output of ``write_report``."""

    model_config = ConfigDict(frozen=True)

    results_dir: str
    """The run's results directory."""
    report_path: str
    """The Markdown report."""
    lanes: tuple[LaneSummary, ...]
    """Totals per lane."""


RunPhase = Literal[
    "planning",
    "awaiting_approval",
    "running",
    "reporting",
    "completed",
    "rejected",
    "expired",
    "failed",
    "cancelled",
]


class ProgressOutput(BaseModel):
    """Answer of the ``progress`` query."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run."""
    phase: RunPhase
    """Where the run is."""
    total: int = 0
    """Tasks in the plan."""
    done: int = 0
    """Pairs finished."""
    running: tuple[str, ...] = ()
    """Task ids in flight."""
    by_class: dict[str, int] = {}
    """Finished attempts per exit class."""
    excluded: int = 0
    """Pairs excluded because an arm exhausted its infra retries."""
    approved_by: str | None = None
    """Who approved, once approved."""
    approved_at: datetime | None = None
    """When, once approved: the start of the clock for the ETA."""
    paused: bool = False
    """No new pair or attempt starts until the run is resumed."""
    parallel: int = 0
    """Pairs in flight at most (``set_parallel`` changes it)."""
    ended_abnormally: tuple[str, ...] = ()
    """Task ids of pairs that ended without telling the run (terminated, reset away):
    counted done and excluded."""


class ArmProgress(BaseModel):
    """Where one arm of a pair is."""

    model_config = ConfigDict(frozen=True)

    lane: str
    """The lane."""
    attempt: int
    """The attempt running or next."""
    state: Literal["running", "backoff", "paused", "waiting_account", "done"]
    """Running an attempt, waiting to retry after an infra failure, waiting for an account
    slot, or finished."""
    retry_at: datetime | None = None
    """When the next attempt starts, during a backoff; when an account is back from its
    cooldown, while waiting for one."""
    note: str = ""
    """Why the arm waits for an account."""
    last_class: str | None = None
    """Exit class of the previous attempt."""


class PairProgress(BaseModel):
    """Answer of the pair workflow's ``progress`` query."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    """The task."""
    arms: tuple[ArmProgress, ...]
    """Each lane."""


class RunOutcome(BaseModel):
    """Result of ``SuiteRunWorkflow``."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run."""
    status: Literal["completed", "rejected", "expired"]
    """How the run ended (``expired``: nobody approved it in time)."""
    reason: str = ""
    """Why it was rejected or expired."""
    results_dir: str = ""
    """The run's results directory."""
    report_path: str = ""
    """The Markdown report."""
    lanes: tuple[LaneSummary, ...] = ()
    """Totals per lane."""
