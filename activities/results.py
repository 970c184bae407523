"""Result activities: persist each attempt, then the run's results and reports."""

from __future__ import annotations

import asyncio

from temporalio import activity

from activities.boundary import KnownSecrets, scrub_value, scrubbed
from durabench import __version__
from durabench.audit import digest_attempt, manifest_of
from durabench.logs import get_logger
from durabench.models.audit import AttemptDigest
from durabench.models.results import AttemptResult, RunResult
from durabench.models.suite_run import ReportInput, ReportOutput
from durabench.results.files import atomic_write, build_results, write_reports
from durabench.results.not_run import continue_command, cut_by_cap, not_run
from durabench.results.store import pull, pulled, push
from durabench.results.story import result_story
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.wording import counted, rounded

__all__ = ["ResultActivities"]

log = get_logger("durabench.worker")


def _in_a_line(result: RunResult) -> str:
    """The run's pairs and each lane's mean, for the worker's line when the run ends."""
    excluded = f", {len(result.excluded)} excluded" if result.excluded else ""
    means = ", ".join(
        f"{lane.lane} mean {'-' if lane.mean_reward is None else rounded(lane.mean_reward)}"
        for lane in result.lanes
    )
    return f"{counted(result.plan.task_count, 'pair')}{excluded}; {means}"


class ResultActivities:
    """Writing results; built in ``worker.py`` with the worker's settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.secrets = KnownSecrets(settings.accounts_file)

    @activity.defn(name="record_attempt")
    @scrubbed
    async def record_attempt(self, result: AttemptResult) -> AttemptDigest:
        """Write the attempt's ``result.json``, scrubbed (its reasons quote what the agent left).

        Returns the hashes of what the attempt left, so they are kept in the attempt's
        history, which nobody edits: ``starter audit`` holds the files against them.
        """
        return await asyncio.to_thread(self._record_attempt, result)

    def _record_attempt(self, result: AttemptResult) -> AttemptDigest:
        update = {"durabench_version": __version__}
        result = scrub_value(result.model_copy(update=update), self.secrets())
        paths = RunPaths.for_run(self.settings.runs_dir, result.run_id)
        directory = paths.attempt(result.task_id, result.lane, result.attempt)
        pull(self.settings, paths, directory)  # collected on its host, maybe not this one
        atomic_write(directory / "result.json", result.model_dump_json(indent=2))
        push(self.settings, paths, directory)
        return digest_attempt(directory)

    @activity.defn(name="write_report")
    @scrubbed
    async def write_report(self, data: ReportInput) -> ReportOutput:
        """Read every attempt's result; write ``results.json``, ``report.md``, ``report.html``.

        Returns, with the totals, the manifest of the run's own files as it leaves them (the
        last of them written here), so they are kept in the run's history, which nobody
        edits: ``starter audit`` holds the files against it.
        """
        return await asyncio.to_thread(self._write_report, data)

    def _write_report(self, data: ReportInput) -> ReportOutput:
        paths = pulled(self.settings, data.run_id)  # every host's attempts
        result = build_results(paths, data.approval, self.settings.pass_threshold)
        write_reports(paths, result)
        push(self.settings, paths, paths.results, paths.report_md, paths.report_html)
        # The worker's operator learns of each run it carries to its end.
        log.info(
            "run finished",
            run_id=data.run_id,
            result=_in_a_line(result),
            report=str(paths.report_md),
        )
        left = not_run(result) + cut_by_cap(result)
        return ReportOutput(
            results_dir=str(paths.root),
            report_path=str(paths.report_md),
            lanes=result.lanes,
            story=result_story(result),
            not_run=len(left),
            continue_command=continue_command(result.plan.request) if left else "",
            manifest=manifest_of(paths.root, deep=False),
        )
