"""The run's own record against itself and its history: plan, approval, final scores.

``plan.json`` (what ran), ``run.json`` (who approved it, and when) and each lane's
``final_score.<lane>.json`` feed the published numbers and their header as much as any
attempt does. History keeps what ``plan_run`` returned, what ``record_run`` was given, the
tasks ``plan_page`` handed out and what ``score_run`` returned; the files must say the same.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from durabench.audit.published import changed_fields
from durabench.models.audit import Finding, Ledger
from durabench.models.results import RunResult
from durabench.models.run import Approval, RunPlan
from durabench.models.suite_run import RecordRunInput
from durabench.service.records import RunScore, score_path
from durabench.settings.paths import RunPaths

__all__ = ["check_record"]


def check_record(
    paths: RunPaths, plan: RunPlan, stored: RunResult | None, ledger: Ledger | None
) -> tuple[list[Finding], Approval | None]:
    """Findings, and the approval the run recorded (the one its results must show).

    The approval is history's when it is there, else ``run.json``'s, else none.
    """
    record, out = _read_record(paths.run)
    out += _run_ids(paths.root.name, plan, record, stored)
    trusted = ledger.approval if ledger is not None and ledger.approval else None
    if record is not None:
        if record.plan != plan.summary():
            why = changed_fields(record.plan, plan.summary(), "run.json", "plan.json")
            out.append(_results("run.json", f"its plan differs from plan.json in {why}"))
        if trusted is not None and record.approval != trusted:
            why = changed_fields(record.approval, trusted, "run.json", "history")
            out.append(_ledger("run.json", f"its approval is not the one history recorded: {why}"))
        trusted = trusted or record.approval
    if stored is not None and trusted is not None and stored.approval != trusted:
        said = "history" if ledger is not None and ledger.approval else "run.json"
        why = changed_fields(stored.approval or Approval(), trusted, "results.json", said)
        out.append(_results("results.json", f"its approval is not the run's: {why}"))
    if ledger is not None:
        out += _against_history(plan, ledger)
    return out + _final_scores(paths, plan, ledger), trusted


def _run_ids(
    run_id: str, plan: RunPlan, record: RecordRunInput | None, stored: RunResult | None
) -> list[Finding]:
    """Each file that names another run than ``run_id``, the run audited (its directory).

    History is read under ``run_id``: a file naming another id would otherwise send the
    audit to a history the server does not have, and past the ledger.
    """
    named = {"plan.json": plan.request.run_id}
    if record is not None:
        named["run.json"] = record.plan.request.run_id
    if stored is not None:
        named["results.json"] = stored.plan.request.run_id
    why = "its directory, and the history audited): the id was changed after the run"
    return [
        _results(name, f"names run {other}, but it is run {run_id}'s ({why}")
        for name, other in named.items()
        if other != run_id
    ]


def _read_record(path: Path) -> tuple[RecordRunInput | None, list[Finding]]:
    if not path.is_file():
        why = "missing: who approved the run cannot be checked; restore it from a backup"
        return None, [_results("run.json", why)]
    try:
        return RecordRunInput.model_validate_json(path.read_bytes()), []
    except ValidationError as exc:
        return None, [_results("run.json", f"not a run record ({exc.errors()[0]['msg']})")]


def _against_history(plan: RunPlan, ledger: Ledger) -> list[Finding]:
    out = []
    if ledger.plan is not None and ledger.plan != plan.summary():
        why = changed_fields(plan.summary(), ledger.plan, "plan.json", "history")
        out.append(_ledger("plan.json", f"it is not the plan history recorded: {why}"))
    if ledger.task_ids is not None:
        listed = tuple(t.task_id for t in plan.tasks)
        if listed != ledger.task_ids:
            added = sorted(set(listed) - set(ledger.task_ids))
            gone = sorted(set(ledger.task_ids) - set(listed))
            why = f"added {added or 'none'}, left out {gone or 'none'}"
            out.append(
                _ledger("plan.json", f"its tasks are not the ones the run handed out ({why})")
            )
    return out


def _final_scores(paths: RunPaths, plan: RunPlan, ledger: Ledger | None) -> list[Finding]:
    """Each lane's final score file: only in a run graded by a service, as history has it."""
    out = []
    service = plan.request.service is not None
    recorded = ledger.final_scores if ledger is not None and service else None
    for lane in plan.lanes:
        path = score_path(paths, lane)
        if not path.is_file():
            if recorded is not None and lane in recorded:
                out.append(_ledger(path.name, "deleted after the service's score was recorded"))
            continue
        if not service:
            why = "in a run that no service graded: put there after the run, and not read"
            out.append(_results(path.name, why))
            continue
        try:
            stored = RunScore.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            out.append(_results(path.name, f"not a score ({exc.errors()[0]['msg']})"))
            continue
        if (stored.run_id, stored.lane) != (paths.root.name, lane):
            why = f"is run {stored.run_id}'s final score of lane {stored.lane}: it was copied here"
            out.append(_results(path.name, why))
        if recorded is None:
            continue
        score = stored.final_score
        if lane not in recorded:
            why = "a score the run's history does not record (put there, or `starter score`)"
            out.append(_ledger(path.name, why))
        elif score != recorded[lane]:
            why = (
                f"says {score:g}, but the service's score history recorded is "
                f"{recorded[lane]:g} (edited, or scored again by `starter score`)"
            )
            out.append(_ledger(path.name, why))
    return out


def _results(where: str, message: str) -> Finding:
    return Finding(check="results", where=where, message=message)


def _ledger(where: str, message: str) -> Finding:
    return Finding(check="ledger", where=where, message=message)
