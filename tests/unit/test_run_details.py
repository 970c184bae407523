"""The run's details in the Web UI and the terminal's plan table come from one list of rows."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from rich.console import Console

from durabench.models.agent import AgentSpec
from durabench.models.pair import ArmProgress
from durabench.models.run import PlanSummary, RunRequest
from durabench.models.suite_run import ProgressOutput
from durabench.planning.rows import plan_rows
from starter.console import plan_table
from workflows.run_details import current_details, markdown_table, pair_details

PLAN = PlanSummary(
    request=RunRequest(run_id="r1", suite="pytorch", agent=AgentSpec(model="m-1")),
    lanes=("baseline", "sourcegraph_full"),
    task_count=4,
    estimated_agent_hours=1.5,
    results_dir="/runs/r1",
    warnings=("the agent leaves no answer | nothing to grade",),
)


def test_the_markdown_table_keeps_each_value_in_its_cell_and_marks_alerts() -> None:
    table = markdown_table(plan_rows(PLAN))
    assert "| tasks | 4 |" in table
    assert "| warning | ⚠ **the agent leaves no answer \\| nothing to grade** |" in table
    cells = [len(re.findall(r"(?<!\\)\|", line)) for line in table.splitlines()]
    assert set(cells) == {3}  # two cells a row: no value's own "|" opens a third


def test_the_terminal_and_the_web_ui_show_the_same_plan() -> None:
    out = Console(width=300, record=True)
    out.print(plan_table(PLAN))
    text = out.export_text()
    details = current_details(ProgressOutput(run_id="r1", phase="awaiting_approval"), PLAN)
    for row in plan_rows(PLAN):
        assert row.key in text and row.key in details
    assert "waiting for approval" in details and "send signal `approve`" in details


def test_a_pairs_details_say_what_each_arm_waits_for() -> None:
    at = datetime(2026, 11, 26, 18, 30, tzinfo=UTC)
    arms = [
        ArmProgress(
            lane="baseline", attempt=2, state="backoff", last_class="infra_rate_limit", retry_at=at
        ),
        ArmProgress(lane="sourcegraph_full", attempt=1, state="waiting_account", note="all busy"),
    ]
    said = pair_details(arms).splitlines()
    assert said == [
        "- **baseline** attempt 2: waits to retry after infra_rate_limit until 18:30:00 UTC",
        "- **sourcegraph_full** attempt 1: waits for an account: all busy",
    ]
