"""Every HTML page durabench writes or serves says, in itself, that nothing in it may run.

Issue 47 defect 15: report.html embeds the agent's last message and reasons (escaped) but
carried no Content-Security-Policy, so a page opened from disk (or a store, or a mail)
relied on escaping alone; the viewer sent one only as a header. The family check: the
report as written by write_reports, and every page of the viewer, carries the one policy
as a meta tag before any content, and the viewer's header is that same policy.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from durabench.results.html_policy import CONTENT_SECURITY_POLICY
from durabench.results.viewer import ViewerSite
from durabench.results.viewer.site import HEADERS
from tests.unit.viewer_run import write_run

META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def _policy_first(html: str) -> str:
    """The meta tag's policy; it comes before the title, styles and body."""
    found = META.search(html)
    assert found is not None, html[:300]
    before = html[: found.start()]
    assert "<title" not in before and "<style" not in before and "<body" not in before
    return found.group(1)


def test_the_policy_lets_nothing_run_or_load() -> None:
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src" not in CONTENT_SECURITY_POLICY  # default-src 'none' covers scripts
    assert "base-uri 'none'" in CONTENT_SECURITY_POLICY
    assert "form-action 'none'" in CONTENT_SECURITY_POLICY
    assert HEADERS["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_report_html_as_written_carries_the_policy(tmp_path: Path) -> None:
    paths = write_run(tmp_path / "runs")
    assert _policy_first(paths.report_html.read_text()) == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    "route",
    [
        "/",
        "/runs/hand/",
        "/runs/hand/report.html",
        "/runs/hand/tasks/t1/",
        "/runs/hand/tasks/t1/baseline/attempt-1/",
        "/runs/hand/tasks/t1/baseline/attempt-1/files/",
        "/runs/nothing-here/",
    ],
)
def test_every_viewer_page_carries_the_policy(tmp_path: Path, route: str) -> None:
    write_run(tmp_path / "runs")
    answer = ViewerSite(tmp_path / "runs").answer(route)
    assert answer.content_type.startswith("text/html")
    assert _policy_first(answer.body.decode()) == CONTENT_SECURITY_POLICY
