"""The suite run's messages: its input and carried state, progress, outcome, plan pages, report.

What a person asks for and approves (request, plan, approval) is in
:mod:`durabench.models.run`; these are what ``SuiteRunWorkflow`` and its activities pass
while the run runs. Small at any suite size: the task list is read in pages.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.audit import Manifest
from durabench.models.results import LaneSummary
from durabench.models.run import Approval, PlanSummary, RunRequest, TaskRef
from durabench.spend.book import SpendCarried, SpendProgress

__all__ = [
    "CarriedState",
    "PlanPage",
    "PlanPageInput",
    "ProgressOutput",
    "RecordRunInput",
    "ReportInput",
    "ReportOutput",
    "RunOutcome",
    "RunPhase",
    "SuiteRunInput",
]


class CarriedState(BaseModel):
    """What a run carries into its next workflow run: small at any suite size."""

    model_config = ConfigDict(frozen=True)

    plan: PlanSummary
    """The plan summary."""
    approval: Approval
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
    """Task ids of pairs that closed without saying how they ended (terminated, timed out)."""
    spend: SpendCarried = Field(default_factory=SpendCarried)
    """The run's side of its spend cap (:mod:`workflows.spend_gate`)."""


class SuiteRunInput(BaseModel):
    """Input of ``SuiteRunWorkflow``: a request, and after continue-as-new its state."""

    model_config = ConfigDict(frozen=True)

    about: tuple[str, ...] = ()
    """What the run will do, what it costs in agent time and how to approve it, in lines
    for people: the Web UI shows the input first on the run's page, so they lead it. The
    workflow does not read them."""
    request: RunRequest
    """What the operator asked for."""
    carried: CarriedState | None = None
    """State from the previous workflow run of this run."""


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
    approval_note: str = ""
    """The note kept with the approval, if it had one."""
    paused: bool = False
    """No new pair or attempt starts until the run is resumed."""
    parallel: int = 0
    """Pairs in flight at most (``set_parallel`` changes it)."""
    ended_abnormally: tuple[str, ...] = ()
    """Task ids of pairs that closed without saying how they ended (terminated, reset away):
    counted done and excluded."""
    spend: SpendProgress = Field(default_factory=SpendProgress)
    """What the run has spent, and its cap."""


class RunOutcome(BaseModel):
    """Result of ``SuiteRunWorkflow``.

    The Web UI shows it with no worker running, fields in this order in a box a few lines
    high: what a person needs comes first.
    """

    model_config = ConfigDict(frozen=True)

    headline: str = ""
    """The result in a sentence, as every report opens: each lane's mean reward, the paired
    difference with its interval, the pairs compared and left out; or "Nothing was
    measured"."""
    run_id: str
    status: Literal["completed", "rejected", "expired"]
    """How the run ended (``expired``: nobody approved it in time)."""
    measured: bool = True
    """Whether any pair was scored; ``False``: every pair was excluded (infra)."""
    approved_by: str | None = None
    """Who approved the run (for an approval by signal: the identity Temporal recorded)."""
    reason: str = ""
    """Why it was rejected or expired."""
    results_dir: str = ""
    """The run's results directory."""
    report_path: str = ""
    """The Markdown report."""
    lanes: tuple[LaneSummary, ...] = ()
    """Totals per lane."""
    not_run: int = 0
    """Pairs the run's spend cap left unstarted or cut short (listed in the report)."""
    continue_command: str = ""
    """The command that runs them with a higher cap (empty: none left)."""


class RecordRunInput(BaseModel):
    """Input of ``record_run``: the approved plan, persisted as ``run.json``."""

    model_config = ConfigDict(frozen=True)

    plan: PlanSummary
    approval: Approval
    signal_number: int | None = None
    """Which ``approve`` signal approved the run (from 1), or ``None``: not a signal.

    ``record_run`` reads that signal's sender from history when the approval names nobody.
    """


class PlanPageInput(BaseModel):
    """Input of ``plan_page``: a slice of the plan's task list."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    offset: int
    """First task index."""
    limit: int
    """At most this many tasks."""


class PlanPage(BaseModel):
    """Output of ``plan_page``."""

    model_config = ConfigDict(frozen=True)

    tasks: tuple[TaskRef, ...]
    """The tasks of the slice, in plan order."""


class ReportInput(BaseModel):
    """Input of ``write_report``: the plan and attempts are read from the results directory."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    approval: Approval | None


class ReportOutput(BaseModel):
    """Output of ``write_report``."""

    model_config = ConfigDict(frozen=True)

    results_dir: str
    """The run's results directory."""
    report_path: str
    """The Markdown report."""
    lanes: tuple[LaneSummary, ...]
    """Totals per lane."""
    story: str = ""
    """The result in a sentence, as every report opens (``result_story``)."""
    not_run: int = 0
    """Pairs the run's spend cap left unstarted or cut short."""
    continue_command: str = ""
    """The command that runs them with a higher cap (empty: none left)."""
    manifest: Manifest | None = None
    """The run's own files beside ``tasks/`` as this call left them: recorded in history
    so ``starter audit`` finds any later change; ``None`` from workers before manifests."""
