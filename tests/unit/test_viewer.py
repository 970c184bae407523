"""The run viewer's pages, read straight from the site (the browser test drives the server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.results.viewer import ViewerSite
from tests.unit.viewer_run import HOSTILE, write_run

ATTEMPT = "/runs/hand/tasks/t1/baseline/attempt-1/"


@pytest.fixture
def site(tmp_path: Path) -> ViewerSite:
    write_run(tmp_path / "runs")
    return ViewerSite(tmp_path / "runs")


def _text(site: ViewerSite, target: str, status: int = 200) -> str:
    answer = site.answer(target)
    assert answer.status == status, answer.body[:500]
    return answer.body.decode()


def test_index_lists_the_run_and_the_run_page_shows_plan_headline_and_scores(
    site: ViewerSite,
) -> None:
    assert 'href="/runs/hand/"' in _text(site, "/")
    run = _text(site, "/runs/hand/")
    assert "<dt>model</dt><dd>m</dd>" in run and "ann at 2026-01-01" in run
    assert "1 of 5 pairs were excluded" in run
    assert '<table id="scores">' in run and "1.00 | 0.50" in run  # t3's baseline
    assert 'href="/runs/hand/tasks/t3/sourcegraph_full/attempt-1/"' in run
    assert "infra_rate_limit reason" in run
    # every attempt that counts costs $0.50 in the hand set: no difference in cost
    assert '<ul id="cost"><li>the sourcegraph_full lane costs +$0.00 per task' in run
    assert '<table id="cost-per-pair">' in run


def test_attempt_page_shows_trajectory_verifier_ledger_and_why(site: ViewerSite) -> None:
    page = _text(site, ATTEMPT)
    assert '<span id="why">completed reason</span>' in page
    assert "step 2 · agent" in page and "tool call</b> Bash" in page and "3 passed" in page
    assert "verifier-stdout.txt" in page and "tests/test_gelu.py ... 3 passed" in page
    assert '<table id="ledger">' in page and "/v1/messages" in page
    pair = _text(site, "/runs/hand/tasks/t4/")
    assert "pair excluded: sourcegraph_full ended infra_usage_cap" in pair
    assert '<table id="pair">' in pair and "- | - (2 attempt(s), last infra_usage_cap)" in pair


def test_agent_text_is_escaped_and_no_script_may_run(site: ViewerSite) -> None:
    page = _text(site, ATTEMPT)
    assert HOSTILE not in page and "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page


@pytest.mark.parametrize(
    "target",
    [
        "/runs/..%2F..%2Fetc/",
        "/runs/hand/tasks/t1/baseline/attempt-1/..%2F..%2F..%2F..%2Fplan.json",
        "/runs/hand/tasks/t1/baseline/attempt-1/../../../../plan.json",
        "/runs/nope/",
        "/runs/hand/tasks/t9/",
        "/runs/hand/tasks/t1/baseline/attempt-7/",
    ],
)
def test_what_is_not_a_kept_file_of_a_run_is_not_found(site: ViewerSite, target: str) -> None:
    assert site.answer(target).status == 404


def test_kept_files_are_plain_text_and_the_reports_links_resolve(site: ViewerSite) -> None:
    raw = site.answer(ATTEMPT + "agent/trajectory.json")
    assert raw.status == 200 and raw.content_type.startswith("text/plain")
    assert "agent/trajectory.json" in _text(site, ATTEMPT + "files/")
    report = _text(site, "/runs/hand/report.html")  # its links are relative to the run
    assert 'href="tasks/t1/baseline/attempt-1/agent/trajectory.json"' in report


def test_a_run_still_going_is_read_from_its_plan_and_finished_attempts(tmp_path: Path) -> None:
    paths = write_run(tmp_path / "runs")
    paths.results.unlink()
    for result in paths.attempt_results()[2:]:
        result.unlink()
    site = ViewerSite(tmp_path / "runs")
    assert "<td>planned, not approved</td>" in _text(site, "/")  # no run.json yet
    run = _text(site, "/runs/hand/")
    assert "approved by</dt><dd>nobody yet" in run and "attempt 1" in run
    assert "- | - (not run)" in run  # tasks not reached yet


def test_view_of_an_unknown_run_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from starter.main import cli

    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    monkeypatch.delenv("DURABENCH_RESULTS_URL", raising=False)
    out = CliRunner().invoke(cli, ["view", "no-such-run"])
    assert out.exit_code == 1
    assert f"no run no-such-run in {tmp_path / 'runs'}" in out.output
    assert "python -m starter view" in out.output and "Traceback" not in out.output
