"""Numbers shown to people are rounded: "0.67", never "0.666667" or "0.6666666666666666".

Enumerated over every surface a person reads a run on (the plan's rows, the terminal's
result tables, report.md, report.html, the viewer's run and attempt pages), for a run
whose numbers are thirds: its estimate, rewards, costs, times and tokens.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from durabench.models.results import RunResult
from durabench.planning.rows import plan_rows
from durabench.results.files import write_reports
from durabench.results.report import render_markdown
from durabench.results.report_html import render_html
from durabench.results.scoring import compute_scorecard
from durabench.results.viewer import ViewerSite
from starter.console import result_tables
from tests.unit.results_set import hand_result
from tests.unit.viewer_run import write_attempts

THIRD = 1 / 3
LONG = re.compile(r"\d\.\d{5,}")
"""A number with five decimals or more: unrounded (a p-value of 0.0625 has four)."""


def _thirds() -> RunResult:
    hand = hand_result()
    attempts = tuple(
        a.model_copy(
            update={
                "wall_seconds": 100 * THIRD + a.attempt,
                "cost_usd": THIRD if a.cost_usd is not None else None,
                "reward": 2 * THIRD if a.reward == 1.0 and a.lane == "baseline" else a.reward,
            }
        )
        for a in hand.attempts
    )
    plan = hand.plan.model_copy(update={"estimated_agent_hours": 2 * THIRD})
    card = compute_scorecard(attempts, [t.task_id for t in plan.tasks], plan.lanes, hand.excluded)
    return hand.model_copy(update={"plan": plan, "attempts": attempts, "scorecard": card})


def _surfaces(tmp_path: Path) -> dict[str, str]:
    result = _thirds()
    assert result.scorecard is not None
    console = Console(width=300, record=True, file=io.StringIO())
    for table in result_tables(result):
        console.print(table)
    write_reports(write_attempts(tmp_path / "runs", result), result)
    site = ViewerSite(tmp_path / "runs")
    return {
        "plan rows": "\n".join(f"{r.key}: {r.value}" for r in plan_rows(result.plan)),
        "terminal": console.export_text(),
        "report.md": render_markdown(result, result.scorecard),
        "report.html": render_html(result, result.scorecard),
        "viewer run": site.answer("/runs/hand/").body.decode(),
        "viewer attempt": site.answer("/runs/hand/tasks/t1/baseline/attempt-1/").body.decode(),
    }


@pytest.mark.parametrize(
    "surface",
    ["plan rows", "terminal", "report.md", "report.html", "viewer run", "viewer attempt"],
)
def test_no_number_shown_has_more_than_four_decimals(tmp_path: Path, surface: str) -> None:
    text = _surfaces(tmp_path)[surface]
    assert LONG.findall(text) == [], [m.group() for m in LONG.finditer(text)][:10]
