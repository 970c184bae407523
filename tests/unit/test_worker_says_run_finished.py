"""A worker says when it carries a run to its end: a line per run, with its outcome and report.

``python worker.py`` otherwise says nothing after "worker started" however many runs it
finishes; the operator of a detached run learns of its end only by asking.
"""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs
from temporalio.testing import ActivityEnvironment

from activities import ResultActivities
from durabench.models.suite_run import ReportInput
from durabench.settings.values import Settings
from tests.unit.results_set import hand_result
from tests.unit.viewer_run import write_attempts


async def test_the_report_of_a_run_is_a_line_with_its_headline_and_where(tmp_path: Path) -> None:
    """The hand-worked run (results_set): 5 pairs, t4 excluded; means 0.6 and 2/3."""
    settings = Settings(home=tmp_path / "home")
    hand = hand_result()
    write_attempts(settings.runs_dir, hand)
    with capture_logs() as logs:
        out = await ActivityEnvironment().run(
            ResultActivities(settings).write_report,
            ReportInput(run_id="hand", approval=hand.approval),
        )
    finished = [e for e in logs if e["event"] == "run finished"]
    assert len(finished) == 1, logs
    assert finished[0]["run_id"] == "hand" and finished[0]["report"] == out.report_path
    assert finished[0]["log_level"] == "info"
    said = "5 pairs, 1 excluded; baseline mean 0.6, sourcegraph_full mean 0.67"
    assert finished[0]["result"] == said
