"""The whole audit of one run: against its ledger when history is there, then its files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from durabench.audit.against_history import check_ledger
from durabench.audit.attempts import check_attempts, check_pairs
from durabench.audit.disk import DiskAttempt, read_attempts, where
from durabench.audit.grades import check_grades
from durabench.audit.manifest import check_run_files
from durabench.audit.names import check_names
from durabench.audit.published import check_published, read_stored
from durabench.audit.record import check_record
from durabench.models.audit import AuditReport, Finding, Ledger
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import NOT_NAMED, Approval, RunPlan
from durabench.results.earlier_runs import read_plan
from durabench.results.files import with_service_grade
from durabench.settings.paths import RunPaths

__all__ = ["audit_run"]


def audit_run(
    runs_dir: Path,
    run_id: str,
    ledger: Ledger | None,
    *,
    skipped: str = "",
    dashboard: Path | None = None,
) -> AuditReport:
    """Audit ``run_id``'s results directory, against ``ledger`` when there is one.

    Without a ledger (``skipped`` says why: the history is gone, or on another server)
    only what the files alone show is checked, and the report says so.

    Raises:
        ConfigError: there is no such run under ``runs_dir``.
    """
    plan = read_plan(runs_dir, run_id)
    paths = RunPaths.for_run(runs_dir, run_id)
    attempts, findings = read_attempts(paths)
    notes: list[str] = []
    if ledger is not None:  # first: history is the strongest witness
        held, notes = check_ledger(ledger, attempts)
        findings += held
        if ledger.files is not None:
            findings += check_run_files(paths, plan, ledger.files)
        elif ledger.task_ids is not None:  # the run's own history was read
            notes.append(_NO_MANIFEST)
    else:
        notes.append(f"ledger check skipped: {skipped}; only the files were checked")
    graded, ungraded = _graded(plan, attempts.values())
    findings += (
        ungraded
        + check_pairs(plan, attempts)
        + check_attempts(plan, graded, {key: found.directory for key, found in attempts.items()})
    )
    grades, grade_notes = check_grades(plan, attempts, ledger)
    findings += grades
    notes += grade_notes
    stored, unread = read_stored(paths)
    findings += unread
    recorded, approval = check_record(paths, plan, stored, ledger)
    findings += recorded
    if approval is not None and approval.approver == NOT_NAMED:
        notes.append(_NOT_NAMED)
    if stored is not None:
        if stored.durabench_version is None:
            why = "records no durabench version: built before versions were recorded, or not "
            findings.append(
                Finding(check="versions", where="results.json", message=why + "by durabench")
            )
        if len(graded) == len(attempts):  # every attempt reads: the run can be rebuilt
            findings += _published(paths, stored, approval, dashboard)
    findings += check_names(paths, plan)
    return AuditReport(
        run_id=run_id,
        clean=not findings,
        ledger_skipped=skipped,
        findings=tuple(findings),
        notes=tuple(notes),
    )


_NOT_NAMED = (
    f"approved by: {NOT_NAMED}: the approval gave no name and its signal carried no identity "
    "(the dev server's Web UI sends none); who approved this run is not recorded"
)

_NO_MANIFEST = (
    "the run's history records no manifest of its own files (a run from before manifests): "
    "plan.json, run.json, the final scores, results and reports were checked by what they "
    "say, not byte for byte"
)


def _graded(
    plan: RunPlan, attempts: Iterable[DiskAttempt]
) -> tuple[list[AttemptResult], list[Finding]]:
    """The attempts as scored (a service's grade as reward), and those that cannot be."""
    graded: list[AttemptResult] = []
    findings: list[Finding] = []
    service = plan.request.service is not None
    for a in attempts:
        try:
            if a.result is not None:
                path = a.directory / "result.json"
                graded.append(with_service_grade(path, a.result, service=service))
        except ValidationError as exc:
            why = f"eval.json is not a grading ({exc.errors()[0]['msg']}): grade it again"
            findings.append(Finding(check="results", where=where(a.key), message=why))
    return graded, findings


def _published(
    paths: RunPaths, stored: RunResult, approval: Approval | None, dashboard: Path | None
) -> list[Finding]:
    try:
        return check_published(paths, stored, approval, dashboard)
    except ValidationError as exc:  # a lane's service score file, read by the rebuild
        why = f"cannot be built again from the run's files ({exc.errors()[0]['msg']})"
        return [Finding(check="results", where="results.json", message=why)]
