"""Result activities: persist each attempt, then the run's results and report."""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio import activity

from durabench.models import AttemptResult, ReportInput, ReportOutput, RunResult
from durabench.paths import RunPaths
from durabench.report import render_markdown, summarize_lanes
from durabench.settings import Settings

__all__ = ["ResultActivities"]


class ResultActivities:
    """Writing results; built in ``worker.py`` with the worker's settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @activity.defn(name="record_attempt")
    async def record_attempt(self, result: AttemptResult) -> None:
        """Write the attempt's ``result.json``."""
        paths = RunPaths.for_run(self.settings.runs_dir, result.run_id)
        target = paths.attempt(result.task_id, result.lane, result.attempt) / "result.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(result.model_dump_json(indent=2))

    @activity.defn(name="write_report")
    async def write_report(self, data: ReportInput) -> ReportOutput:
        """Read every attempt's result from disk; write ``results.json`` and ``report.md``."""
        return await asyncio.to_thread(self._write_report, data)

    def _write_report(self, data: ReportInput) -> ReportOutput:
        paths = RunPaths.for_run(self.settings.runs_dir, data.plan.request.run_id)
        attempts = tuple(
            AttemptResult.model_validate_json(Path(p).read_text()) for p in paths.attempt_results()
        )
        result = RunResult(
            plan=data.plan,
            approval=data.approval,
            attempts=attempts,
            excluded=data.excluded,
            lanes=summarize_lanes(attempts, data.plan.lanes, data.excluded),
        )
        paths.results.write_text(result.model_dump_json(indent=2))
        paths.report_md.write_text(render_markdown(result))
        return ReportOutput(
            results_dir=str(paths.root), report_path=str(paths.report_md), lanes=result.lanes
        )
