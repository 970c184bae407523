"""The HTML report renders in a real browser: headless Chromium, no network."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from durabench.results.report_html import render_html
from durabench.results.scoring import compute_scorecard
from tests.integration.chromium import dump_dom, png_size, probed, screenshot
from tests.unit.results_set import hand_result

pytestmark = pytest.mark.browser

LONG_TASK = "codescalebench-" + "very-long-task-name-" * 3 + "001"


def test_html_report_renders_chart_and_tables(tmp_path: Path) -> None:
    result = hand_result()
    assert result.scorecard is not None
    page = tmp_path / "report.html"
    page.write_text(render_html(result, result.scorecard))
    text = page.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "://" not in text  # it fetches nothing

    dom = dump_dom(tmp_path, page.as_uri())
    assert dom.count('class="task-row"') == 5
    assert dom.count('class="bar"') == 10
    assert 'id="delta-chart"' in dom and 'class="ci"' in dom
    assert "⚠ false completion" in dom
    assert dom.count("<tr") >= 5 + 3 + 13 + 4  # cells, totals, messages, excluded (+ headers)
    assert "approved by ann at 2026-01-01" in dom
    assert "1 of 5 pairs were excluded" in dom  # the headline report.md has

    data = screenshot(tmp_path, page.as_uri(), tmp_path / "report.png")
    assert png_size(data) == (1280, 1800)
    assert len(data) > 50_000  # a blank page compresses to a few KB


def _long_names() -> str:
    """The hand results with a long task id and long messages, nothing measured."""
    result = hand_result()
    tasks = tuple(
        t.model_copy(update={"task_id": LONG_TASK}) if t.task_id == "t5" else t
        for t in result.plan.tasks
    )
    plan = result.plan.model_copy(update={"tasks": tasks})
    attempts = tuple(
        a.model_copy(update={"task_id": LONG_TASK, "last_message": "x" * 150})
        if a.task_id == "t5"
        else a
        for a in result.attempts
    )
    everything = dict.fromkeys((t.task_id for t in tasks), "infra")
    result = result.model_copy(update={"plan": plan, "attempts": attempts, "excluded": everything})
    card = compute_scorecard(attempts, [t.task_id for t in tasks], plan.lanes, everything)
    return render_html(result, card)


def _clean() -> str:
    """The hand results with no infra attempt and nothing excluded: a clean run."""
    result = hand_result()
    attempts = tuple(a for a in result.attempts if not a.infra)
    tasks = [t.task_id for t in result.plan.tasks]
    card = compute_scorecard(attempts, tasks, result.plan.lanes, {})
    clean = result.model_copy(update={"attempts": attempts, "excluded": {}, "scorecard": card})
    return render_html(clean, card)


@pytest.mark.parametrize("width", [1400, 500])
@pytest.mark.parametrize("variant", ["long names, nothing measured", "clean"])
def test_html_report_fits_the_window_with_labels_whole(
    tmp_path: Path, width: int, variant: str
) -> None:
    """No page wider than the window, no label clipped, no word broken inside a cell
    ("baselin/e" at 500 px), no table header over no rows."""
    page = tmp_path / "report.html"
    html = _long_names() if variant != "clean" else _clean()
    assert ("Nothing was measured" in html) == (variant != "clean")
    page.write_text(probed(html))
    dom = dump_dom(tmp_path, page.as_uri(), width=width, height=900)
    found = re.search(r'<pre id="layout-probe">(.*?)</pre>', dom, re.S)
    assert found is not None, "the layout probe did not run"
    assert found.group(1) == "layout ok"
