"""A run's request, plan and approval: what a person confirms before money is spent."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from durabench.models.agent import AgentSpec, flat_agent_fields
from durabench.models.benchmark_service import ServiceTarget
from durabench.models.cost import CostEstimate
from durabench.models.parallelism import Parallelism
from durabench.models.prices import PriceTable

__all__ = [
    "DEFAULT_PARALLEL",
    "MAX_NAMED_TASKS",
    "Approval",
    "Category",
    "Control",
    "Counterpart",
    "ConfigMode",
    "PlanSummary",
    "Rejection",
    "RunPlan",
    "RunRequest",
    "TaskRef",
]

DEFAULT_PARALLEL = 2
"""Pairs in flight when no source of the plan bounds them and none was asked for."""
MAX_NAMED_TASKS = 200
"""Tasks a plan names in a list of them (the plan travels through workflow history)."""

ConfigMode = Literal["paired", "baseline_only", "full_only"]
Category = Literal["staging", "official"]


class RunRequest(BaseModel):
    """What the operator asked for (``starter run`` options); the input of a run."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """Run id; the workflow id is ``run/<run_id>``."""
    suite: str
    """Suite name in the suite registry."""
    agent: AgentSpec = Field(default_factory=AgentSpec)
    """The agent, its model and options (``--agent``, ``--model``, ``--agent-opt``)."""
    parallel: int | None = Field(default=None, ge=1)
    """Pairs in flight at once (``--parallel``); ``None``: the plan derives it from the
    accounts, the sandboxes and the model's rate limits (:class:`Parallelism`)."""
    category: Category = "staging"
    """``staging`` or ``official``."""
    config_mode: ConfigMode = "paired"
    """Which lanes run."""
    full_config: str = "sourcegraph_full"
    """The MCP lane's config name."""
    baseline_config: str = "baseline"
    """The baseline lane's config name."""
    infra_retries: int = Field(default=2, ge=0)
    """New attempts an arm gets after an ``infra_*`` attempt before its pair is excluded."""
    infra_backoff_sec: float = Field(default=60.0, ge=0)
    """Wait before the first infra retry; doubles with each further retry."""
    budget_tokens: int | None = Field(default=None, gt=0)
    """Tokens (input, output, cache) one attempt may use, enforced by the model gateway
    (``--budget``); past it the attempt ends as ``model_budget``. ``None``: no budget."""
    max_spend_usd: float | None = Field(default=None, gt=0)
    """The most the run may spend on model tokens, over every host (``--max-spend``);
    ``None``: no cap."""
    lease_poll_sec: float = Field(default=15.0, gt=0)
    """While every slot of the agent's accounts is in use, how often a waiting arm asks
    the account pool again (jittered)."""
    pairs_per_run: int = Field(default=500, ge=1)
    """Pairs one workflow run starts before it continues as new: history stays bounded."""
    approval_timeout_sec: float = Field(default=86_400.0, gt=0)
    """An unapproved run ends itself after this long (``DURABENCH_APPROVAL_TIMEOUT_SEC``)."""
    approved_by: str | None = None
    """Who approved the plan with the request (``starter run --yes``): the run takes the
    approval as soon as its plan is made, so a detached run needs nobody to stay and
    send it."""
    selection: str | None = None
    """A CodeScaleBench selection file: its tasks instead of the whole suite."""
    benchmarks_dir: str | None = None
    """A CodeScaleBench checkout: suites by ``benchmark`` and the default selection file."""
    allow_unpaired: bool = False
    """``ALLOW_UNPAIRED_SINGLE_CONFIG=true``: a single-config run skips the counterpart check."""
    rerun: Literal["failed", "infra", "all"] | None = None
    """Which tasks of ``rerun_of`` to run again."""
    rerun_of: str | None = None
    """The run a rerun takes its tasks from."""
    dataset_file: str | None = None
    """A dataset file of text tasks (``--dataset-file``), graded by the service."""
    service: ServiceTarget | None = None
    """The benchmark service that grades the run (``--service-url``); ``None``: the local
    verifier in the sandbox."""

    _flat_agent = model_validator(mode="before")(flat_agent_fields)

    @property
    def tasks_from_service(self) -> bool:
        """Whether the tasks are the service's dataset (``--dataset-name`` and nothing else)."""
        named = self.suite or self.selection or self.benchmarks_dir or self.dataset_file
        return self.service is not None and bool(self.service.dataset) and not named

    @property
    def source(self) -> str:
        """What the tasks come from: a selection or dataset file, a dataset, or the suite."""
        if self.tasks_from_service and self.service is not None:
            return f"dataset {self.service.dataset} at {self.service.url}"
        return self.selection or self.dataset_file or self.suite


class TaskRef(BaseModel):
    """A task of the plan, small enough to travel through workflow history."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    task_dir: str
    """Task directory on the worker's host."""
    agent_timeout_sec: float = 600.0
    """The agent's time limit: ``time_limit_sec`` times the timeout multiplier."""
    verifier_timeout_sec: float = 600.0
    """The verifier's time limit."""
    build_timeout_sec: float = 1800.0
    """The image build's time limit."""


class PlanSummary(BaseModel):
    """The plan without its task list: what travels through workflow history at any size."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 4
    """Format version (2: the task list lives in ``plan.json``, read in pages; 3: the
    parallel slots may be derived, ``request.parallel`` then null and ``parallelism``
    holding the number; 4: the run's prices are recorded in ``prices``)."""
    request: RunRequest
    """What was asked."""
    lanes: tuple[str, ...]
    """Lane config names, baseline first."""
    task_count: int
    """Tasks in the plan."""
    estimated_agent_hours: float
    """Sum of time limits over tasks and lanes: an upper bound of agent time."""
    results_dir: str
    """The run's results directory on the worker's host."""
    mcp_env_missing: tuple[str, ...] = ()
    """MCP variables unset on the planning worker: the MCP lane would run without its server."""
    unpaired: tuple[str, ...] = ()
    """Tasks of a single-config run with no counterpart, run anyway under the bypass."""
    selection_file: str | None = None
    """The selection file the tasks came from, resolved."""
    account_slots: int | None = None
    """Slots of the agent's ready accounts in ``accounts.toml``, leased per attempt from
    the account pool; ``None``: no account is listed for the agent, and keys come from
    the workers' environment."""
    accounts_note: str = ""
    """The agent's accounts at plan time: how many are ready, and why the others are not."""
    warnings: tuple[str, ...] = ()
    """What a person should know before approving, such as an agent that leaves no answer
    for the service to grade."""
    forgeable_tasks: tuple[str, ...] = ()
    """Tasks whose tests run the agent's code as root (``TaskSpec.runs_submission``): a
    submission there could write its own reward. At most :data:`MAX_NAMED_TASKS` named."""
    forgeable_count: int = 0
    """How many tasks that is, named or not."""
    host_id: str = ""
    """The planning worker's host; empty in plans from before hosts were recorded."""
    worker_lock: str = ""
    """``sha256:<hex>`` of the lock file the planning worker was installed from
    (:mod:`durabench.lock_file`); empty for an install without one, and in older plans."""
    host_sandboxes: int | None = None
    """Attempts that host admits at once (``DURABENCH_MAX_SANDBOXES``): with ``parallel``,
    what bounds the containers running at once; ``None`` in older plans."""
    sandbox: str = "docker"
    """The sandbox backend the planning worker runs attempts on (``DURABENCH_SANDBOX``)."""
    sandbox_quota: int | None = None
    """``DURABENCH_SANDBOX_QUOTA``: sandboxes at once across every host, enforced by the
    deployment's slots workflow; ``None``: not set (or an older plan)."""
    sandbox_limits: str = ""
    """Each sandbox's limits on that backend, in words; empty in older plans."""
    cli_version: str | None = None
    """The agent CLI version both lanes run (see :mod:`durabench.planning.cli_choice`); ``None`` for
    an agent that is no CLI, and in plans from before versions were chosen."""
    cli_version_note: str = ""
    """Where that version comes from: ``--agent-opt version``, the routing table, or the
    adapter's own (which a task image's own CLI replaces in a staging run)."""
    cost: CostEstimate | None = None
    """The expected cost, as a range (:mod:`durabench.planning.cost_estimate`); ``None`` in
    older plans."""
    parallelism: Parallelism | None = None
    """The parallel slots and how they were derived; ``None`` in older plans, whose
    request holds the number."""
    prices: PriceTable = Field(default_factory=PriceTable)
    """The prices of the run's model and its agent's auxiliary models as the planning
    worker read them (built in, or its ``prices.toml``): every attempt is costed at them,
    and the audit recomputes with them. A model missing from it is unpriced (a cost that
    needs it is reported so, never as 0)."""

    @property
    def parallel(self) -> int:
        """Pairs in flight at once, as planned."""
        if self.parallelism is not None:
            return self.parallelism.parallel
        return self.request.parallel or DEFAULT_PARALLEL


class Counterpart(BaseModel):
    """Where the other lane of a single-config run's task was run before."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    run_id: str
    """The earlier run holding its valid counterpart."""


class RunPlan(PlanSummary):
    """The whole plan, as ``plan.json`` holds it."""

    tasks: tuple[TaskRef, ...]
    """Every task of the run."""
    counterparts: tuple[Counterpart, ...] = ()
    """For a single-config run: the earlier run of each task's other lane."""

    def summary(self) -> PlanSummary:
        """The plan without its tasks."""
        return PlanSummary.model_validate(self.model_dump(exclude={"tasks", "counterparts"}))


class Control(BaseModel):
    """Input of the ``pause`` and ``resume`` signals: who, and why (both optional)."""

    model_config = ConfigDict(frozen=True)

    by: str = "unknown"
    """Who sent it."""
    reason: str = ""
    """Why."""


class Rejection(BaseModel):
    """Input of the ``reject`` signal."""

    model_config = ConfigDict(frozen=True)

    reason: str = "rejected"
    """Why the run must not start."""
    rejected_by: str = "unknown"
    """Who rejected it."""


NOT_NAMED = "not named"
"""The approver of an approval that named nobody and whose signal carried no identity."""


class Approval(BaseModel):
    """Input of the ``approve`` signal and update; ``{}`` approves as planned.

    An approval may restate any of the six parameters a person confirms; a restated value
    that differs from the plan refuses the approval, so nobody approves a run they did not
    mean (the wrong model, the official category) by accident.
    """

    model_config = ConfigDict(frozen=True)

    approver: str = NOT_NAMED
    """Who approved; :data:`NOT_NAMED` when the approval (a signal's ``{}``) named nobody."""
    approved_at: datetime | None = None
    """When; set by the workflow from ``workflow.now()``."""
    note: str = ""
    """Free text kept with the approval."""
    model: str | None = None
    """Restated model."""
    suite: str | None = None
    """Restated suite name, or selection file."""
    config_mode: ConfigMode | None = None
    """Restated config mode."""
    full_config: str | None = None
    """Restated full (MCP) config."""
    parallel: int | None = None
    """Restated parallel slots."""
    category: Category | None = None
    """Restated category."""
    cost: str | None = None
    """Restated expected cost, as the plan writes it for approval (``12.40-48.00``, or
    ``unpriced``): a run is approved at a price."""
