"""Run a request to its end through ``starter run`` and read what it left."""

from __future__ import annotations

from temporalio.client import Client

from durabench.models import RunRequest, RunResult
from durabench.paths import RunPaths
from durabench.settings import Settings
from starter.run import main as run_main


async def finished_run(
    request: RunRequest, client: Client, settings: Settings
) -> tuple[RunPaths, RunResult]:
    """Approve and run ``request``; it must complete. Its results directory and results."""
    outcome = await run_main(request, yes=True, client=client, settings=settings)
    assert outcome is not None and outcome.status == "completed", outcome
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    return paths, RunResult.model_validate_json(paths.results.read_text())
