"""CodeScaleBench selection files: which tasks of which benchmarks a run takes.

The format is CodeScaleBench's own, read as it is::

    {"metadata": {...}, "tasks": [{"task_id": ..., "benchmark": ..., "task_dir": ...}, ...]}

``task_dir`` is relative to the checkout's ``benchmarks/`` directory (``--benchmarks-dir``
names the checkout; its ``configs/selected_benchmark_tasks.json`` is the default selection).
Task ids are matched case-insensitively, as CodeScaleBench's scripts do, so a task listed
twice under two spellings is caught. Every problem is found before anything runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from durabench.errors import ConfigError, TaskFormatError
from durabench.ids import check_id
from durabench.json_files import read_json_model
from durabench.models.task import TaskSpec
from durabench.tasks.loader import load_task

__all__ = [
    "DEFAULT_SELECTION",
    "Selection",
    "SelectionEntry",
    "read_selection",
    "selection_path",
    "load_selection",
]

DEFAULT_SELECTION = Path("configs") / "selected_benchmark_tasks.json"
"""Where a CodeScaleBench checkout keeps its selection."""

_SHOWN = 5
"""Missing task directories named in an error before the rest are counted."""


class SelectionEntry(BaseModel):
    """One task of a selection file (other CodeScaleBench fields are kept, not used)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    task_id: str
    benchmark: str
    task_dir: str


class Selection(BaseModel):
    """A selection file."""

    model_config = ConfigDict(frozen=True, extra="allow")

    metadata: dict[str, Any] = {}
    tasks: tuple[SelectionEntry, ...]


def selection_path(selection: str | None, benchmarks_dir: str | None) -> Path:
    """The selection file a run uses: ``--selection``, else the checkout's default.

    Raises:
        ConfigError: neither is given.
    """
    if selection:
        return Path(selection).expanduser()
    if benchmarks_dir:
        return Path(benchmarks_dir).expanduser() / DEFAULT_SELECTION
    raise ConfigError("no selection: give --selection FILE or --benchmarks-dir CHECKOUT")


def read_selection(path: Path) -> Selection:
    """Parse and check a selection file.

    Raises:
        ConfigError: the file is missing, not JSON, not in the selection format, names a
            task id that is not an id (:mod:`durabench.ids`) or lists one twice (compared
            case-insensitively); the message says which.
    """
    shape = '{"metadata": ..., "tasks": [{"task_id": ..., "benchmark": ..., "task_dir": ...}]}'
    selection = read_json_model(path, Selection, "selection file", shape)
    seen: dict[str, str] = {}
    for entry in selection.tasks:
        check_id(entry.task_id, f"selection file {path}: task_id")
        key = entry.task_id.lower()
        if key in seen:
            raise ConfigError(
                f"selection file {path} lists task {entry.task_id!r} twice (as "
                f"{seen[key]!r} too; ids are compared case-insensitively): keep one entry"
            )
        seen[key] = entry.task_id
    return selection


def _task_roots(path: Path, benchmarks_dir: str | None) -> list[Path]:
    """Where ``task_dir`` entries are looked up, in order."""
    roots = []
    if benchmarks_dir:
        checkout = Path(benchmarks_dir).expanduser()
        roots += [checkout / "benchmarks", checkout]
    roots.append(path.parent)
    return roots


def load_selection(
    selection: str | None, benchmarks_dir: str | None, benchmark: str | None = None
) -> tuple[Path, list[TaskSpec]]:
    """The tasks a selection names, optionally only those of one ``benchmark``.

    Raises:
        ConfigError: see :func:`read_selection`; also when task directories are missing (the
            message lists them and where they were looked for) or no task is left.
        TaskFormatError: a task directory is not a valid Harbor task.
    """
    path = selection_path(selection, benchmarks_dir)
    entries = read_selection(path).tasks
    if benchmark:
        entries = tuple(e for e in entries if e.benchmark.lower() == benchmark.lower())
        if not entries:
            raise ConfigError(f"selection file {path} has no task of benchmark {benchmark!r}")
    roots = _task_roots(path, benchmarks_dir)
    found: list[tuple[SelectionEntry, Path]] = []
    missing: list[str] = []
    for entry in entries:
        where = next((r / entry.task_dir for r in roots if (r / entry.task_dir).is_dir()), None)
        if where is None:
            missing.append(entry.task_dir)
        else:
            found.append((entry, where))
    if missing:
        shown = ", ".join(missing[:_SHOWN])
        more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
        raise ConfigError(
            f"selection file {path}: {len(missing)} task director"
            f"{'y is' if len(missing) == 1 else 'ies are'} missing: {shown}{more} (looked in "
            f"{', '.join(str(r) for r in roots)}); point --benchmarks-dir at the checkout"
        )
    specs = []
    for entry, where in found:
        spec = load_task(where)
        if spec.task_id.lower() != entry.task_id.lower():
            raise TaskFormatError(
                f"selection file {path}: {entry.task_dir} holds task {spec.task_id!r}, "
                f"not {entry.task_id!r}; fix the entry's task_id or task_dir"
            )
        specs.append(spec)
    return path, specs
