"""The HTML report renders in a real browser: headless Chromium, no network."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from durabench.results.report import summarize_lanes
from durabench.results.report_html import render_html
from durabench.results.scoring import compute_scorecard
from tests.integration.chromium import (
    dump_dom,
    in_view,
    keep,
    page_text_when,
    png_size,
    probed,
    screenshot,
)
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
    """The hand results' t1-t3 without t3's infra attempt: a clean run, nothing excluded.

    Over the 3 pairs compared, baseline's task means are 1.0, 0.0 and 0.5 (mean 0.5, 1 of 3
    passes); the full lane's 1.0, 1.0 and 0.0 (mean 0.667, 2 of 3).
    """
    result = hand_result()
    kept = ("t1", "t2", "t3")
    attempts = tuple(a for a in result.attempts if not a.infra and a.task_id in kept)
    plan = result.plan.model_copy(
        update={"tasks": tuple(t for t in result.plan.tasks if t.task_id in kept)}
    )
    lanes = summarize_lanes(attempts, plan.lanes, {})
    card = compute_scorecard(attempts, list(kept), plan.lanes, {})
    update = {"plan": plan, "attempts": attempts, "excluded": {}, "scorecard": card}
    return render_html(result.model_copy(update={**update, "lanes": lanes}), card)


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


@pytest.mark.parametrize("width", [1400, 500])
def test_a_clean_report_opens_with_its_result_in_the_first_window(
    tmp_path: Path, width: int
) -> None:
    """At a desktop's and a phone's width the result's sentence is what the window shows
    first: the pairs compared, the lanes' means over them, the paired difference."""
    page = tmp_path / "report.html"
    page.write_text(_clean())
    result = [
        "Over the 3 pairs compared",
        "baseline: mean reward 0.5 (1/3 passed)",
        "Paired difference (sourcegraph_full − baseline)",
    ]
    shot = tmp_path / f"report-{width}.png"
    text = page_text_when(
        tmp_path, page.as_uri(), shot, result, width=width, height=800, then=in_view(result)
    )
    assert text.rpartition("\f")[2].splitlines() == [f"in view: {n}" for n in result]
    assert "Excluded attempts" not in text  # a clean run has none: no empty header
    assert png_size(shot.read_bytes()) == (width, 800)
    keep(shot, f"report-{width}.png")
