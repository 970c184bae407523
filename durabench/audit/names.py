"""Every name under a run is one the run writes; anything else was put there, and is named.

A run writes its own files at the top, ``tasks/<task>/<lane>/`` for each planned task and
lane, and in each lane attempt directories named as
:func:`~durabench.settings.paths.attempt_number` reads them. A reader that matched names
more loosely (``attempt-*``) would read an alias such as ``attempt-01`` into the numbers; an
audit that skipped what it does not know would hide it. Every reader matches the one
pattern, and the audit names whatever else it finds. What lies inside an attempt directory
is held against the manifest its history records (:mod:`durabench.audit.against_history`).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from durabench.models.audit import Finding
from durabench.models.run import RunPlan
from durabench.service.records import score_path
from durabench.settings.paths import RunPaths, attempt_number

__all__ = ["check_names", "top_level_files"]

_ATTEMPT = "an attempt directory is attempt-<n>, n from 1 without leading zeros"


def top_level_files(paths: RunPaths, plan: RunPlan) -> frozenset[str]:
    """The names of the files a run writes beside ``tasks/``."""
    own = (paths.plan, paths.run, paths.results, paths.report_md, paths.report_html)
    scores = (score_path(paths, lane) for lane in plan.lanes)
    return frozenset(p.name for p in (*own, *scores))


def check_names(paths: RunPaths, plan: RunPlan) -> list[Finding]:
    """Each name under the run that no run writes, from the top down to attempt directories."""
    out: list[Finding] = []
    known = top_level_files(paths, plan)
    for entry in _entries(paths.root):
        if entry.name == "tasks" and _is_dir(entry):
            continue
        if entry.name not in known or not _is_file(entry):
            out.append(_unknown(paths, entry, "not a file a run writes"))
    planned = {t.task_id for t in plan.tasks}
    for task in _entries(paths.root / "tasks"):
        if task.name not in planned or not _is_dir(task):
            out.append(_unknown(paths, task, "not a task of the run's plan"))
            continue
        out += _lanes(paths, task, plan.lanes)
    return out


def _lanes(paths: RunPaths, task: Path, lanes: Collection[str]) -> list[Finding]:
    out = []
    for lane in _entries(task):
        if lane.name not in lanes or not _is_dir(lane):
            out.append(_unknown(paths, lane, "not a lane of the run's plan"))
            continue
        for attempt in _entries(lane):
            if attempt_number(attempt.name) is None or not _is_dir(attempt):
                out.append(_unknown(paths, attempt, f"not a name a run writes ({_ATTEMPT})"))
            elif not _is_file(attempt / "result.json"):
                why = "an attempt directory without result.json: no attempt was recorded here"
                out.append(_unknown(paths, attempt, why))
    return out


def _entries(directory: Path) -> list[Path]:
    """The entries of ``directory`` by name; none if it is no directory."""
    if not _is_dir(directory):
        return []
    with os.scandir(directory) as found:
        return sorted((Path(e.path) for e in found), key=lambda p: p.name)


def _is_dir(path: Path) -> bool:
    """A directory, not a link to one: a run writes no links."""
    return path.is_dir() and not path.is_symlink()


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _unknown(paths: RunPaths, path: Path, what: str) -> Finding:
    where = path.relative_to(paths.root).as_posix()
    message = f"{what}: it was put there after the run; remove it"
    return Finding(check="names", where=where, message=message)
