"""A service's gradings (``eval.json``) against the run's plan and its history.

A grading sets an attempt's reward, so it is held to the same standard as the attempt: it
counts only in a run that asked for a service, and only as the ``evaluate_attempt`` in the
attempt's history wrote it (the digest it returned). Anything else is a file someone put
there after the run.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from durabench.audit.digest import sha256_file
from durabench.audit.disk import AttemptKey, DiskAttempt, where
from durabench.models.audit import Finding, Ledger, LedgerAttempt
from durabench.models.run import RunPlan
from durabench.service.records import TaskGrade

__all__ = ["check_grades"]


def check_grades(
    plan: RunPlan, attempts: Mapping[AttemptKey, DiskAttempt], ledger: Ledger | None
) -> tuple[list[Finding], list[str]]:
    """Findings and notes on every attempt's ``eval.json``."""
    if plan.request.service is None:
        return [
            Finding(
                check="results",
                where=where(key),
                message="eval.json in a run that no service graded (its plan asks for "
                "none): it was put there after the run, and it is not read",
            )
            for key, found in sorted(attempts.items())
            if (found.directory / "eval.json").exists()
        ], []
    out = [f for key, found in sorted(attempts.items()) for f in _elsewhere(key, found)]
    notes: list[str] = []
    if ledger is None:
        return out, notes
    recorded = {AttemptKey(e.task_id, e.lane, e.attempt): e for e in ledger.attempts}
    for key, found in sorted(attempts.items()):
        entry = recorded.get(key)
        if entry is not None:  # an attempt history lacks is named by the ledger check
            _one(key, found, entry, out, notes)
    return out, notes


def _one(
    key: AttemptKey,
    found: DiskAttempt,
    entry: LedgerAttempt,
    out: list[Finding],
    notes: list[str],
) -> None:
    path = found.directory / "eval.json"
    current = sha256_file(path)
    if not entry.graded:
        if current is None:
            return
        if _failed(found):  # no reward either way: as if it were not there
            notes.append(f"{where(key)}: eval.json records a grading that failed, outside history")
            return
        out.append(
            _ledger(
                key,
                "eval.json is a grading the run's history does not record: put there after "
                "the run, or graded again by `starter score`; the run's reward is not its",
            )
        )
    elif entry.grade is None:
        if current is not None:
            notes.append(f"{where(key)}: its grading predates grade digests; eval.json unchecked")
    elif current != entry.grade:
        what = (
            "was deleted"
            if current is None
            else f"changed (sha256 {entry.grade[:12]}… then, {current[:12]}… now)"
        )
        out.append(
            _ledger(
                key,
                f"eval.json {what} after the service's grading was recorded (by hand, or "
                "graded again by `starter score`)",
            )
        )


def _elsewhere(key: AttemptKey, found: DiskAttempt) -> list[Finding]:
    """A grading that names another run or attempt than the one it lies in."""
    try:
        grade = TaskGrade.model_validate_json((found.directory / "eval.json").read_bytes())
    except (ValidationError, OSError):  # none, or not a grading: named where it is read
        return []
    said = AttemptKey(grade.task_id, grade.lane, grade.attempt)
    if said == key and grade.run_id == found.directory.parents[3].name:  # the run's directory
        return []
    why = (
        f"eval.json is run {grade.run_id}'s {where(said)}: it was copied here from another attempt"
    )
    return [Finding(check="results", where=where(key), message=why)]


def _failed(found: DiskAttempt) -> bool:
    try:
        return bool(
            TaskGrade.model_validate_json((found.directory / "eval.json").read_bytes()).failed
        )
    except (ValidationError, OSError):
        return False


def _ledger(key: AttemptKey, message: str) -> Finding:
    return Finding(check="ledger", where=where(key), message=message)
