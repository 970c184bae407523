"""The whole audit of one run: against its ledger when history is there, then its files."""

from __future__ import annotations

from pathlib import Path

from durabench.audit.attempts import check_attempts, check_pairs
from durabench.audit.disk import read_attempts
from durabench.audit.ledger import check_ledger
from durabench.audit.published import check_published, read_stored
from durabench.earlier_runs import read_plan
from durabench.models.audit import AuditReport, Finding, Ledger
from durabench.paths import RunPaths
from durabench.results_io import with_service_grade

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
    else:
        notes.append(f"ledger check skipped: {skipped}; only the files were checked")
    graded = [
        with_service_grade(a.directory / "result.json", a.result)
        for a in attempts.values()
        if a.result is not None
    ]
    findings += check_pairs(plan, attempts) + check_attempts(plan, graded)
    stored, unread = read_stored(paths)
    findings += unread
    if stored is not None:
        if stored.durabench_version is None:
            findings.append(
                Finding(
                    check="versions",
                    where="results.json",
                    message="records no durabench version: built before versions were "
                    "recorded, or not by durabench",
                )
            )
        if len(graded) == len(attempts):  # every result.json reads: the run can be rebuilt
            findings += check_published(paths, stored, dashboard)
    return AuditReport(
        run_id=run_id,
        clean=not findings,
        ledger_skipped=skipped,
        findings=tuple(findings),
        notes=tuple(notes),
    )
