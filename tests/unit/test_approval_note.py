"""The note kept with an approval is shown wherever the approval is: status, reports, viewer.

``starter approve --note`` (or the signal's ``note``) saves why a run was approved; a note
nobody can read afterwards says nothing.
"""

from __future__ import annotations

from pathlib import Path

from durabench.models.run import Approval
from durabench.models.suite_run import ProgressOutput
from durabench.planning.approval import approval_progress
from durabench.results.files import write_reports
from durabench.results.report import render_markdown
from durabench.results.report_html import render_html
from durabench.results.viewer import ViewerSite
from starter.console import progress_line
from tests.unit.results_set import hand_result
from tests.unit.viewer_run import write_attempts

NOTE = "budget ok'd by the team lead"


def _noted() -> Approval:
    approval = hand_result().approval
    assert approval is not None
    return approval.model_copy(update={"note": NOTE})


def test_status_of_a_running_run_shows_who_approved_and_the_note() -> None:
    p = ProgressOutput(run_id="r", phase="running", total=2, **approval_progress(_noted()))
    line = progress_line(p)
    assert f"approved by ann (note: {NOTE})" in line, line


def test_an_approval_without_a_note_shows_no_empty_note() -> None:
    p = ProgressOutput(run_id="r", phase="running", total=2, **approval_progress(Approval()))
    assert "note" not in progress_line(p)


def test_the_reports_and_the_viewer_show_the_note(tmp_path: Path) -> None:
    result = hand_result().model_copy(update={"approval": _noted()})
    assert result.scorecard is not None
    write_reports(write_attempts(tmp_path, result), result)
    viewer = ViewerSite(tmp_path).answer("/runs/hand/").body.decode()
    for text in (render_markdown(result, result.scorecard), render_html(result, result.scorecard)):
        assert NOTE in text.replace("&#x27;", "'"), text[:1500]
    assert NOTE in viewer.replace("&#x27;", "'")
