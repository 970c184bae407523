"""One attempt's messages: which attempt (``AttemptRef``), and each activity's input and output.

They travel through Temporal history, so they stay small: paths, ids and numbers, never
transcripts, logs or secrets. Each sits beside the others of the attempt's lifecycle
(:mod:`durabench.attempt`), in the order the attempt uses them.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.agent import AgentSpec
from durabench.models.benchmark_service import ServiceTarget
from durabench.models.prices import PriceTable
from durabench.models.run import TaskRef
from durabench.models.verdict import Verdict

__all__ = [
    "AgentRunOutput",
    "AttemptRef",
    "ClassifyAttemptInput",
    "CollectOutput",
    "FinishInput",
    "FinishOutput",
    "HostClaim",
    "PreparedImage",
    "ProvisionOutput",
    "VerifyOutput",
]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_.-]+")
"""Characters a Docker container name cannot hold."""


class AttemptRef(BaseModel):
    """Names one attempt: every attempt-level activity takes this (or a model holding it)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    task: TaskRef
    lane: str
    """Lane config name."""
    attempt: int = 1
    """Attempt number, from 1."""
    agent: AgentSpec
    """The agent, its model and options, as the run's request named them."""
    service: ServiceTarget | None = None
    """The service that grades the attempt instead of the local verifier."""
    budget_tokens: int | None = None
    """Tokens the attempt may use, enforced by the model gateway; ``None``: no budget."""
    spend_capped: bool = False
    """The run has a spend cap: the gateway reserves the attempt's requests against it."""
    prices: PriceTable = Field(default_factory=PriceTable)
    """The prices the run is costed with (its plan's): the attempt's metered tokens at
    these are its ``cost_usd``."""
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
    """The image an attempt's sandbox starts from, built or found by ``provision_sandbox``."""

    model_config = ConfigDict(frozen=True)

    image: str
    """Image tag, content-addressed."""
    dockerfile: str
    """Dockerfile variant it was built from."""
    task_image_id: str = ""
    """The task image's id (``sha256:...``); empty when unknown."""
    agent_image_id: str = ""
    """The id of the image the agent runs in (the task image plus its installed CLI, or
    the task image itself when nothing was installed); empty when unknown."""


class ProvisionOutput(BaseModel):
    """Output of ``provision_sandbox``: the image it started from, then the sandbox."""

    model_config = ConfigDict(frozen=True)

    image: PreparedImage | None = None
    """The image, built or found in the same activity as the start (a second activity
    would cost every attempt a workflow task, though all but the first find it built).
    ``None`` only from :meth:`durabench.attempt.Attempt.provision`, which starts a given
    image: the activity adds it."""
    image_ready_at: datetime | None = None
    """When the image was ready and the start began (the worker's clock): the line between
    the ``prepare_image`` and ``provision_sandbox`` phases in the attempt's timings."""
    container_id: str
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
    """What ``finish_sandbox``'s collect kept of the attempt's logs."""

    model_config = ConfigDict(frozen=True)

    cut: tuple[str, ...] = ()
    """What the collection's limits left out, in words."""


class FinishOutput(BaseModel):
    """Output of ``finish_sandbox``: the collect's outcome, the verdict; the container is gone.

    The collect is timed on the host, so ``result.json`` keeps its phase timing.
    """

    model_config = ConfigDict(frozen=True)

    verdict: Verdict | None = None
    """The attempt classified from the collected logs, when its input carried the facts."""

    collected: CollectOutput | None = None
    """What the collect kept; ``None`` when it failed (the logs are lost, not the result)."""
    collect_error: str = ""
    """``Type: message`` of the collect's failure."""
    collect_started_at: datetime
    collect_finished_at: datetime


class VerifyOutput(BaseModel):
    """Output of ``verify``."""

    model_config = ConfigDict(frozen=True)

    reward: float
    """The verifier's reward."""
    build_failed: bool = False
    """Whether the task's build command failed before the tests ran."""
    failure: str = ""
    """Why the tests gave no reward (they timed out, crashed, wrote no number), when they
    did not: the tests ran over what the agent left, so that is the agent's failure and
    ``reward`` is 0.0. Empty when the verifier wrote its reward."""


class ClassifyAttemptInput(BaseModel):
    """What ``finish_sandbox`` classifies an attempt from besides its transcript."""

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


class FinishInput(BaseModel):
    """Input of ``finish_sandbox``: the attempt, and its facts when it is to be classified."""

    model_config = ConfigDict(frozen=True)

    ref: AttemptRef
    """The attempt whose logs are collected and whose container is removed."""
    classify: ClassifyAttemptInput | None = None
    """The facts of an attempt whose agent ran (and whose tests did, if any): it is
    classified from the logs just collected, on the host, once the container is gone.
    ``None`` when the attempt ended before (a cancel, a failed phase): nothing to judge."""
