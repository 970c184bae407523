"""The suite registry: a suite name maps to task directories.

Built-in suites ship inside the package (``durabench/suites/<name>/``); a team's own
suites are directories of tasks under ``$DURABENCH_HOME/suites/<name>/``, which win
over a built-in of the same name.
"""

from __future__ import annotations

from pathlib import Path

from durabench.errors import TaskFormatError, UnknownSuite
from durabench.models.task import TaskSpec
from durabench.tasks.loader import load_task

__all__ = ["BUILTIN_SUITES_DIR", "known_suites", "load_suite", "suite_dirs"]

BUILTIN_SUITES_DIR = Path(__file__).resolve().parent.parent / "suites"


def _roots(home: Path | None) -> list[Path]:
    roots = [BUILTIN_SUITES_DIR]
    if home is not None:
        roots.insert(0, home / "suites")
    return roots


def known_suites(home: Path | None = None) -> list[str]:
    """Names of every suite the registry knows, sorted."""
    names = {p.name for root in _roots(home) if root.is_dir() for p in root.iterdir() if p.is_dir()}
    return sorted(names)


def suite_dirs(name: str, home: Path | None = None) -> list[Path]:
    """Task directories of suite ``name``, sorted by directory name.

    Raises:
        UnknownSuite: no registry root has the suite; the message lists the known ones.
    """
    for root in _roots(home):
        suite = root / name
        if suite.is_dir():
            dirs = sorted(p for p in suite.iterdir() if p.is_dir() and not p.name.startswith("."))
            if not dirs:
                raise UnknownSuite(f"suite {name!r} ({suite}) holds no task directories")
            return dirs
    known = ", ".join(known_suites(home)) or "none"
    where = home / "suites" if home else BUILTIN_SUITES_DIR
    raise UnknownSuite(
        f"unknown suite {name!r}; known suites: {known}. "
        f"Add your own as a directory of tasks under {where}/<name>/"
    )


def load_suite(name: str, home: Path | None = None) -> list[TaskSpec]:
    """Load every task of suite ``name``; every subdirectory must be a task.

    Raises:
        UnknownSuite: see :func:`suite_dirs`.
        TaskFormatError: a task directory of the suite is invalid (named in the message), or
            two tasks share an id.
    """
    tasks = [load_task(d) for d in suite_dirs(name, home)]
    seen: dict[str, str] = {}
    for t in tasks:
        if t.task_id in seen:
            raise TaskFormatError(
                f"suite {name!r}: task id {t.task_id!r} is used by {seen[t.task_id]} and "
                f"{t.task_dir}; give each task its own [task] id"
            )
        seen[t.task_id] = t.task_dir
    return tasks
