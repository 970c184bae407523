"""``python -m starter score <run-id> [--force]``: grade a finished run again, no agent runs.

A run graded by a benchmark service keeps what it sent and what came back in its results
directory (``eval.json`` per attempt, ``final_score.<lane>.json``). This grades the attempts
that have no grading yet (every attempt with ``--force``), asks the service for each lane's
final score, and rewrites the results and reports. Keys come from this shell's environment
(``VALS_AUTH_KEY`` or ``BENCHMARK_API_KEY``), as on a worker.
"""

from __future__ import annotations

import click
from pydantic import ValidationError
from rich.progress import Progress

from durabench.atomic import atomic_write
from durabench.errors import ConfigError, ServiceAuthError, ServiceError, ServiceUnsupported
from durabench.models.benchmark_service import ServiceTarget
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import RunPlan
from durabench.models.suite_run import RecordRunInput
from durabench.results.earlier_runs import read_plan
from durabench.results.files import build_results, write_reports
from durabench.results.store import pulled, push
from durabench.service import (
    EvaluateAttemptInput,
    ScoreRunInput,
    ServiceClient,
    grade_attempt,
    score_lane,
)
from durabench.settings.values import Settings
from durabench.wording import counted
from starter.console import console, shown
from starter.options import (
    run_async,
    run_id_argument,
    service_scale_option,
    service_url_option,
)

__all__ = ["score", "score_main"]


def _target(plan: RunPlan, service_url: str | None, scale: float | None) -> ServiceTarget:
    """The run's service; at ``service_url`` (it moved) and on ``scale`` when given."""
    target = plan.request.service
    if target is None:
        raise ConfigError(
            f"run {plan.request.run_id} was not graded by a service (it ran without "
            "--service-url): its rewards come from the local verifier, and there is nothing "
            "to grade again"
        )
    changed = {"url": service_url, "scale": scale}
    changed = {k: v for k, v in changed.items() if v is not None}
    if not changed:
        return target
    try:
        return ServiceTarget.model_validate({**target.model_dump(), **changed})
    except ValidationError as exc:
        raise ConfigError(f"--service-url: {exc.errors()[0]['msg']}") from None


async def score_main(
    run_id: str,
    *,
    force: bool = False,
    service_url: str | None = None,
    scale: float | None = None,
    settings: Settings | None = None,
) -> RunResult:
    """Grade the run's attempts where needed, score each lane, rewrite the reports.

    An attempt whose grading fails is reported and left for the next ``starter score``;
    the others are graded all the same.

    Raises:
        ConfigError: no such run here, or no service to grade it with.
        ServiceError: the service refused the key or the endpoint, which concerns every
            attempt, or stayed down while scoring (the message says which).
    """
    settings = settings or Settings.from_env()
    paths = pulled(settings, run_id)
    plan = read_plan(settings.runs_dir, run_id)
    target = _target(plan, service_url, scale)
    if target != plan.request.service:  # the plan records where the grades come from
        request = plan.request.model_copy(update={"service": target})
        atomic_write(paths.plan, plan.model_copy(update={"request": request}).model_dump_json())
    attempts = [AttemptResult.model_validate_json(p.read_text()) for p in paths.attempt_results()]
    failed: list[str] = []
    async with ServiceClient.for_target(target) as client:
        with Progress(console=console, transient=True) as progress:
            job = progress.add_task(
                f"grading {counted(len(attempts), 'attempt')}", total=len(attempts)
            )
            for a in attempts:
                data = EvaluateAttemptInput(
                    service=target,
                    run_id=run_id,
                    task_id=a.task_id,
                    lane=a.lane,
                    attempt=a.attempt,
                    force=force,
                )
                try:
                    await grade_attempt(settings.runs_dir, data, client)
                except (ServiceAuthError, ServiceUnsupported):
                    raise
                except ServiceError as exc:  # this attempt's only: grade the others
                    failed.append(f"{a.task_id} / {a.lane} / attempt {a.attempt}: {exc}")
                progress.advance(job)
        for line in failed:
            console.print(f"[yellow]not graded[/] {shown(line)}")
        for lane in plan.lanes:
            out = await score_lane(
                settings.runs_dir, ScoreRunInput(service=target, run_id=run_id, lane=lane), client
            )
            missing = f" ({out.tasks_missing} missing)" if out.tasks_missing else ""
            console.print(
                f"{shown(lane)}: service final score {out.final_score:g} (on the service's own "
                f"scale){missing}"
            )
    approval = None
    if paths.run.is_file():
        approval = RecordRunInput.model_validate_json(paths.run.read_text()).approval
    result = build_results(paths, approval, settings.pass_threshold)
    write_reports(paths, result)
    push(settings, paths)  # gradings, scores, the plan's service and the reports
    console.print(f"Results and reports rewritten in {shown(str(paths.root))}")
    if failed:
        console.print(
            f"{len(failed)} attempt(s) not graded; `python -m starter score {run_id}` "
            "grades them again"
        )
    return result


@click.command()
@run_id_argument
@click.option("--force", is_flag=True, help="Grade every attempt again, not only ungraded ones.")
@service_url_option("The run's service moved here.")
@service_scale_option(
    None,
    "The value of a full pass when results do not say (the run's, 100 by default); "
    "with --force, read every grading again on it.",
)
def score(run_id: str, force: bool, service_url: str | None, service_scale: float | None) -> None:
    """Grade a finished run again through its benchmark service; no agent runs."""
    run_async(score_main)(run_id, force=force, service_url=service_url, scale=service_scale)
