"""Checks that what a run publishes follows from its attempts.

``results.json`` is built again from ``plan.json`` and the attempt files, exactly as the
run's report activity built it; the stored file, ``report.md``, ``report.html`` and the
run's dashboard entry must be what that rebuild gives. Best/Mean in the stored file must
count model data points only.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from durabench.audit.disk import AttemptKey, where
from durabench.models.audit import Finding
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import Approval
from durabench.results.dashboard import Dashboard, entry_of
from durabench.results.files import build_results
from durabench.results.report import render_markdown
from durabench.results.report_html import render_html
from durabench.results.scoring import DEFAULT_PASS_THRESHOLD
from durabench.settings.paths import RunPaths
from durabench.wording import counted

__all__ = ["changed_fields", "check_published", "read_stored"]

_PARTS = ("plan", "excluded", "lanes", "scorecard", "service_scores")


def read_stored(paths: RunPaths) -> tuple[RunResult | None, list[Finding]]:
    """The stored ``results.json``, or why there is none to check."""
    path = paths.results
    if not path.is_file():
        return None, [_results("missing: the run did not finish, or the file was deleted")]
    try:
        return RunResult.model_validate_json(path.read_bytes()), []
    except ValidationError as exc:
        return None, [_results(f"not a run's results ({exc.errors()[0]['msg']})")]


def check_published(
    paths: RunPaths, stored: RunResult, approval: Approval | None, dashboard: Path | None
) -> list[Finding]:
    """The stored results, reports and dashboard entry against a rebuild from the attempts.

    ``approval`` is the run's own (history's, else ``run.json``'s): the reports are rebuilt
    with it, so an approver edited into ``results.json`` shows in them as a difference.
    """
    comp = stored.scorecard.comparison if stored.scorecard else None
    threshold = comp.pass_threshold if comp else DEFAULT_PASS_THRESHOLD
    rebuilt = build_results(paths, approval or stored.approval, threshold)
    out = _counted_only(stored) + _attempts(stored.attempts, rebuilt.attempts)
    out += [
        _results(f"field {part} does not follow from the attempts")
        for part in _PARTS
        if getattr(stored, part) != getattr(rebuilt, part)
    ]
    card = rebuilt.scorecard
    if card is not None:
        reports = {
            paths.report_md: render_markdown(rebuilt, card),
            paths.report_html: render_html(rebuilt, card, paths.attempt_trajectories()),
        }
        for path, text in reports.items():
            if not path.is_file() or path.read_text() != text:
                out.append(_finding(path.name, "does not follow from the attempts"))
    return out + _dashboard(dashboard, rebuilt)


def _counted_only(stored: RunResult) -> list[Finding]:
    """No infra or unscored attempt inside the stored Best/Mean."""
    scored = Counter((a.task_id, a.lane) for a in stored.attempts if a.included)
    cells = stored.scorecard.cells if stored.scorecard else ()
    return [
        _results(
            f"Best/Mean of {c.task_id}/{c.lane} counts {c.included} attempt(s), but only "
            f"{scored[(c.task_id, c.lane)]} of them are scored model data points (an infra or "
            "unscored attempt is counted)"
        )
        for c in cells
        if c.included != scored[(c.task_id, c.lane)]
    ]


def _attempts(
    stored: tuple[AttemptResult, ...], rebuilt: tuple[AttemptResult, ...]
) -> list[Finding]:
    def index(attempts: tuple[AttemptResult, ...]) -> dict[AttemptKey, AttemptResult]:
        return {AttemptKey(a.task_id, a.lane, a.attempt): a for a in attempts}

    old, new = index(stored), index(rebuilt)
    listed = Counter(AttemptKey(a.task_id, a.lane, a.attempt) for a in stored)
    out = [  # an index holds one of each: count the copies first
        _results(f"lists {where(k)} {counted(n, 'time')}: a copy was added after the run")
        for k, n in sorted(listed.items())
        if n > 1
    ]
    out += [
        _results(f"lists {where(k)}, which has no result.json") for k in sorted(old - new.keys())
    ]
    out += [_results(f"leaves out {where(k)}") for k in sorted(new.keys() - old)]
    for key in sorted(old.keys() & new.keys()):
        changed = changed_fields(old[key], new[key], "results.json", "result.json")
        if changed:
            out.append(_results(f"{where(key)} differs from its result.json in {changed}"))
    return out


def changed_fields(stored: BaseModel, actual: BaseModel, in_stored: str, in_actual: str) -> str:
    """The fields that differ, with both values: ``reward (0.5 in A, 1.0 in B)``."""
    parts = [
        f"{name} ({_short(getattr(stored, name))} in {in_stored}, "
        f"{_short(getattr(actual, name))} in {in_actual})"
        for name in type(stored).model_fields
        if getattr(stored, name) != getattr(actual, name)
    ]
    return ", ".join(parts)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dashboard(dashboard: Path | None, rebuilt: RunResult) -> list[Finding]:
    """The run's dashboard entry, if it was published there, against the attempts."""
    if dashboard is None or not dashboard.is_file():
        return []
    run_id = rebuilt.plan.request.run_id
    try:
        board = Dashboard.model_validate_json(dashboard.read_bytes())
    except ValidationError as exc:
        return [_finding(str(dashboard), f"not a dashboard ({exc.errors()[0]['msg']})")]
    entries = [entry for entry in board.runs if entry.run_id == run_id]
    out = []
    if len(entries) > 1:  # a reader may show any one of them: each is held to the attempts
        times = counted(len(entries), "time")
        why = f"lists the run {times}: a copy was added after it was published"
        out.append(_finding(str(dashboard), why))
    for entry in entries:
        published = entry.model_copy(update={"ledger_checked": None, "forced": ()})
        changed = changed_fields(published, entry_of(rebuilt), "the entry", "the attempts")
        if changed:
            why = f"the run's entry differs in {changed}; `starter publish` rebuilds it"
            out.append(_finding(str(dashboard), why))
    return out


def _results(message: str) -> Finding:
    return _finding("results.json", message)


def _finding(where_: str, message: str) -> Finding:
    return Finding(check="results", where=where_, message=message)
