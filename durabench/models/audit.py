"""The audit of a finished run: what history recorded of each attempt, and what was found.

``record_attempt`` returns an :class:`AttemptDigest`, so Temporal keeps, in the attempt's
append-only history, hashes of exactly what was written. ``starter audit`` reads those back
as a :class:`Ledger` and holds the results directory up against it (:class:`AuditReport`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from durabench.models.run import Approval, PlanSummary

__all__ = [
    "DIGESTED_FILES",
    "AttemptDigest",
    "FileDigest",
    "AuditCheck",
    "AuditReport",
    "Finding",
    "Ledger",
    "LedgerAttempt",
]

DIGESTED_FILES = (
    "result.json",
    "verifier/reward.txt",
    "agent/stdout.txt",
    "submission.patch",
)
"""An attempt's files the digest covers, under its directory: its result, and what the
report reads of it (the reward, the kept transcript tail, the diff)."""


class FileDigest(BaseModel):
    """One file as it was written: its size and hash tell any change of it."""

    model_config = ConfigDict(frozen=True)

    size: int
    """Its length in bytes."""
    sha256: str
    """The sha256 (hex) of its bytes."""


Manifest = dict[str, FileDigest]
"""Every file a writer left under a directory, by POSIX path relative to it."""


class AttemptDigest(BaseModel):
    """What ``record_attempt`` wrote, by hash: small, and no secret can be in it."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    """Format version."""
    files: dict[str, str | None]
    """Each of :data:`DIGESTED_FILES` to the sha256 (hex) of its bytes, ``None`` if absent."""
    durabench_version: str
    """The durabench of the worker that wrote the attempt."""
    manifest: Manifest | None = None
    """Every file under the attempt's directory as ``record_attempt`` left it (the trajectory,
    the verifier's output, the instruction, the build log...), so a change of any file a
    reader sees is found; ``None``: recorded before manifests."""


class LedgerAttempt(BaseModel):
    """One attempt workflow, as its history tells it."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    lane: str
    attempt: int
    """The attempt number."""
    ended: str
    """How the workflow ended (``completed``, ``cancelled``, ...; ``running``)."""
    recorded: bool
    """Whether a ``record_attempt`` of it completed (in its history, or its pair's when its
    workflow failed or was cancelled by hand)."""
    digest: AttemptDigest | None
    """What that ``record_attempt`` returned; ``None`` when nothing was recorded, or the
    history is from before digests."""
    graded: bool = False
    """Whether an ``evaluate_attempt`` of it completed: a service graded it in the run."""
    grade: str | None = None
    """The sha256 of the ``eval.json`` the last such grading wrote, as it returned it;
    ``None`` when none completed, or the history is from before grade digests."""


class Ledger(BaseModel):
    """A run's attempts as Temporal history records them."""

    model_config = ConfigDict(frozen=True)

    run_ended: str
    """How the run's workflow ended (``completed``, ``failed``, ...; ``running``)."""
    attempts: tuple[LedgerAttempt, ...]
    """Every attempt workflow of the run's planned tasks, and of any attempt on disk."""
    plan: PlanSummary | None = None
    """The plan ``plan_run`` returned (``plan.json`` without its tasks); ``None``: not read."""
    approval: Approval | None = None
    """The approval ``record_run`` was given to write into ``run.json``."""
    task_ids: tuple[str, ...] | None = None
    """Every task the run's ``plan_page`` calls handed out, in plan order; ``None``: not
    read (a ledger from before the run's own history was read)."""
    final_scores: dict[str, float] | None = None
    """Each lane's final score as ``score_run`` returned it (a run graded by a service)."""
    files: Manifest | None = None
    """The run's own files beside ``tasks/`` (``plan.json`` with its tasks and counterparts,
    ``run.json``, final scores, results, reports) as ``write_report``, their last writer,
    left them; ``None``: not read, or recorded before manifests."""


AuditCheck = Literal[
    "pairs", "ledger", "served_model", "cost", "exit_class", "results", "versions", "names"
]
"""The audit's checks, named in each finding."""


class Finding(BaseModel):
    """One thing that does not hold."""

    model_config = ConfigDict(frozen=True)

    check: AuditCheck
    where: str
    """The attempt (``task/lane/attempt-n``), task, or file it is about."""
    message: str
    """What is wrong, in a sentence a person can check."""

    def line(self) -> str:
        """The finding as the audit prints it."""
        return f"[{self.check}] {self.where}: {self.message}"


class AuditReport(BaseModel):
    """The outcome of ``starter audit`` (its ``--json``)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    """Format version."""
    run_id: str
    clean: bool
    """Whether nothing was found: the run may be published."""
    ledger_skipped: str = ""
    """Why the attempts were not checked against history (empty: they were)."""
    findings: tuple[Finding, ...] = ()
    """What does not hold; none means the run audits clean."""
    notes: tuple[str, ...] = ()
    """What was not checked, and why (not findings)."""

    def lines(self) -> tuple[str, ...]:
        """Each finding as the audit prints it."""
        return tuple(f.line() for f in self.findings)
