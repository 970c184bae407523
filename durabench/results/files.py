"""Reading and writing a run's results directory: one place for the file formats."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from durabench import __version__
from durabench.atomic import atomic_write
from durabench.errors import ConfigError
from durabench.json_files import first_error
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import Approval, RunPlan
from durabench.results.report import render_markdown, summarize_lanes
from durabench.results.report_html import render_html
from durabench.results.scoring import compute_scorecard
from durabench.service.records import RunScore, TaskGrade, score_path
from durabench.settings.paths import RunPaths

__all__ = [
    "atomic_write",
    "build_results",
    "excluded_pairs",
    "load_results",
    "with_service_grade",
    "write_reports",
]


def excluded_pairs(attempts: Iterable[AttemptResult]) -> dict[str, str]:
    """Pairs whose arm ended infra (it exhausted its retries): task id to why."""
    last: dict[tuple[str, str], AttemptResult] = {}
    for a in sorted(attempts, key=lambda a: a.attempt):
        last[(a.task_id, a.lane)] = a
    out: dict[str, str] = {}
    for (task_id, lane), a in sorted(last.items()):
        if a.infra:
            why = f"{lane} ended {a.exit_class} on attempt {a.attempt}: {a.reason}"
            out[task_id] = f"{out[task_id]}; {why}" if task_id in out else why
    return out


def with_service_grade(path: Path, attempt: AttemptResult, *, service: bool) -> AttemptResult:
    """The attempt (read from ``path``) with the service's grade as its reward, if graded.

    Only a run that asked for a service (``service``) is graded by one: in any other run
    an ``eval.json`` is no grading but a file someone put there, and it is never read
    (``starter audit`` names it). A grading that failed, ended ``error`` or gave no usable
    reward becomes the attempt's ``verifier_error`` (the service is its verifier), so the
    report shows the service's word rather than the classifier's reason.

    Raises:
        ValidationError: the run's ``eval.json`` is not a grading.
    """
    grade_file = path.parent / "eval.json"
    if not service or not grade_file.is_file():
        return attempt
    grade = TaskGrade.model_validate_json(grade_file.read_text())
    reward = grade.reward
    if reward is not None:
        return attempt.model_copy(update={"reward": reward})
    if grade.failed:
        why = f"service grading failed: {grade.failed}"
    elif grade.note:
        why = f"service graded {grade.status}: {grade.note}"
    elif grade.status == "error":
        why = f"service graded error: {grade.error_text or 'no reason given'}"
    else:
        return attempt
    return attempt.model_copy(update={"reward": None, "verifier_error": why})


def _service_scores(paths: RunPaths, lanes: Iterable[str]) -> dict[str, float]:
    scores = {}
    for lane in lanes:
        path = score_path(paths, lane)
        if path.is_file():
            scores[lane] = RunScore.model_validate_json(path.read_text()).final_score
    return scores


def build_results(paths: RunPaths, approval: Approval | None, threshold: float) -> RunResult:
    """A run's results from ``plan.json`` and the attempt files on disk.

    For a run graded by a service, an attempt's reward is the service's grade
    (``pass_percentage`` over its scale, from its ``eval.json``) and each lane's final score
    is kept.
    """
    plan = RunPlan.model_validate_json(paths.plan.read_text())
    service = plan.request.service is not None
    attempts = tuple(
        with_service_grade(p, AttemptResult.model_validate_json(p.read_text()), service=service)
        for p in paths.attempt_results()
    )
    excluded = excluded_pairs(attempts)
    card = compute_scorecard(
        attempts, [t.task_id for t in plan.tasks], plan.lanes, excluded, threshold
    )
    return RunResult(
        plan=plan,
        approval=approval,
        attempts=attempts,
        excluded=excluded,
        lanes=summarize_lanes(attempts, plan.lanes, excluded),
        scorecard=card,
        service_scores=_service_scores(paths, plan.lanes) if service else {},
        durabench_version=__version__,
    )


def write_reports(paths: RunPaths, result: RunResult) -> None:
    """``results.json``, ``report.md`` and ``report.html``."""
    if result.scorecard is None:
        raise ValueError("results without a scorecard cannot be reported")
    atomic_write(paths.results, result.model_dump_json(indent=2))
    atomic_write(paths.report_md, render_markdown(result, result.scorecard))
    html = render_html(result, result.scorecard, paths.attempt_trajectories())
    atomic_write(paths.report_html, html)


def load_results(paths: RunPaths, threshold: float | None = None) -> RunResult:
    """A run's ``results.json``, rescored when ``threshold`` is given or it has no scorecard.

    Raises:
        ConfigError: the run has no results (yet), or its results.json is not a run's results.
    """
    if not paths.results.is_file():
        raise ConfigError(
            f"no results at {paths.results}: the run has not finished, or ran on another "
            "machine (see `python -m starter status <run-id>`)"
        )
    try:
        result = RunResult.model_validate_json(paths.results.read_bytes())
    except ValidationError as exc:  # one line, not pydantic's page
        raise ConfigError(
            f"{paths.results} is not a run's results ({first_error(exc)}): it is damaged; "
            f"build it again from the attempts with `python -m starter report "
            f"{paths.root.name}`, or restore it from a backup"
        ) from None
    if threshold is not None or result.scorecard is None:
        plan = result.plan
        card = compute_scorecard(
            result.attempts,
            [t.task_id for t in plan.tasks],
            plan.lanes,
            result.excluded,
            1.0 if threshold is None else threshold,
        )
        result = result.model_copy(update={"scorecard": card})
    return result
