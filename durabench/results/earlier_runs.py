"""What earlier runs left in the runs directory: counterparts for gap-fill, tasks to rerun.

A single-config run (``--baseline-only`` / ``--full-only``) only makes sense next to the
other lane of the same tasks, already run with the same model and category; otherwise it
produces numbers nobody can compare, and so does a counterpart that ran another version
of the agent CLI. The plan checks that here, from the results directories, before anything
is approved. Reruns take their tasks (and the CLI version they ran) from the same place.
With an object store, the planning activity pulls every host's plans and attempt results
into the runs directory first (:meth:`~durabench.results.store.ResultStore.pull_index`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import ValidationError

from durabench.errors import ConfigError
from durabench.json_files import first_error
from durabench.models.results import AttemptResult
from durabench.models.run import RunPlan
from durabench.results.files import with_service_grade
from durabench.settings.paths import RunPaths

__all__ = [
    "Counterparts",
    "OtherVersion",
    "RerunWhich",
    "counterparts",
    "last_attempts",
    "read_plan",
    "rerun_task_ids",
    "versions_ran",
]

RerunWhich = Literal["failed", "infra", "all"]


def read_plan(runs_dir: Path, run_id: str) -> RunPlan:
    """The plan of an earlier run.

    Raises:
        ConfigError: there is no such run here (callers pull it from the store first), or
            its plan.json is not a plan.
    """
    path = RunPaths.for_run(runs_dir, run_id).plan
    if not path.is_file():
        raise ConfigError(
            f"no run {run_id!r} under {runs_dir} (no plan.json), nor in DURABENCH_RESULTS_URL's "
            "store if set: give the id of an earlier run (`python -m starter status` lists them)"
        )
    try:
        return RunPlan.model_validate_json(path.read_bytes())
    except ValidationError as exc:  # one line, not pydantic's page (what a user can act on)
        raise ConfigError(
            f"plan.json of run {run_id} is not a plan ({first_error(exc)}): the run's files are "
            "damaged, and nothing in them can be checked; restore it from a backup"
        ) from None


def last_attempts(root: Path, lane: str = "*") -> dict[tuple[str, str], AttemptResult]:
    """The last attempt of each (task, lane) of a run directory, rewarded as it was scored."""
    last: dict[tuple[str, str], AttemptResult] = {}
    plan_file = root / "plan.json"
    service = plan_file.is_file() and (
        RunPlan.model_validate_json(plan_file.read_text()).request.service is not None
    )
    for path in RunPaths(root=root).attempt_results(None if lane == "*" else lane):
        a = AttemptResult.model_validate_json(path.read_text())
        a = with_service_grade(path, a, service=service)
        key = (a.task_id, a.lane)
        if key not in last or last[key].attempt < a.attempt:
            last[key] = a
    return last


def _valid(a: AttemptResult) -> bool:
    """A counterpart counts when it ended ``completed`` or ``model_*``: scored, not infra."""
    return a.exit_class == "completed" or a.exit_class.startswith("model_")


class OtherVersion(NamedTuple):
    """A counterpart that would count but for the CLI version it ran."""

    run_id: str
    """The earlier run."""
    version: str | None
    """The CLI version it ran; ``None``: its result recorded none."""


class Counterparts(NamedTuple):
    """What earlier runs hold for a gap-fill's tasks (task ids in lower case)."""

    found: dict[str, str]
    """Task id to the latest earlier run holding a valid counterpart."""
    other_version: dict[str, OtherVersion]
    """Tasks whose only valid counterparts ran another CLI version: the latest of them."""


def counterparts(
    runs_dir: Path,
    *,
    model: str,
    category: str,
    lane: str,
    task_ids: Iterable[str],
    cli_version: str | None = None,
) -> Counterparts:
    """The earlier runs holding a valid ``lane`` attempt of each task.

    Only runs with the same model and category count, and, when the run's agent is a CLI
    (``cli_version`` is the version it will run), only attempts that ran that version.
    """
    wanted = {t.lower() for t in task_ids}
    found: dict[str, str] = {}
    other: dict[str, OtherVersion] = {}
    plans = sorted(runs_dir.glob("*/plan.json"), key=lambda p: p.stat().st_mtime)
    for plan_file in plans:
        plan = RunPlan.model_validate_json(plan_file.read_text())
        req = plan.request
        if req.agent.model != model or req.category != category or lane not in plan.lanes:
            continue
        for (task_id, _), a in last_attempts(plan_file.parent, lane).items():
            if task_id.lower() not in wanted or not _valid(a):
                continue
            if cli_version is None or a.cli_version == cli_version:
                found[task_id.lower()] = req.run_id
            else:
                other[task_id.lower()] = OtherVersion(req.run_id, a.cli_version)
    return Counterparts(found, {t: o for t, o in other.items() if t not in found})


def versions_ran(root: Path) -> tuple[str, ...]:
    """The CLI versions the last attempts of a run directory recorded, sorted."""
    return tuple(sorted({a.cli_version for a in last_attempts(root).values() if a.cli_version}))


def rerun_task_ids(runs_dir: Path, run_id: str, which: RerunWhich, threshold: float) -> list[str]:
    """Tasks of run ``run_id`` to run again, in plan order.

    ``all``: every task. ``infra``: a lane ended ``infra_*`` or never finished. ``failed``:
    those, and tasks where a lane ended without passing (reward below ``threshold``).
    """
    plan = read_plan(runs_dir, run_id)
    last = last_attempts(RunPaths.for_run(runs_dir, run_id).root)
    picked = []
    for task in plan.tasks:
        arms = [last.get((task.task_id, lane)) for lane in plan.lanes]
        infra = any(a is None or a.infra for a in arms)
        failed = infra or any(a is not None and (a.reward or 0.0) < threshold for a in arms)
        if which == "all" or (which == "infra" and infra) or (which == "failed" and failed):
            picked.append(task.task_id)
    return picked
