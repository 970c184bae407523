"""The run's details in the Web UI and the terminal's plan table come from one list of rows."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from rich.console import Console

from durabench.models.agent import AgentSpec
from durabench.models.pair import ArmProgress
from durabench.models.run import PlanSummary, RunRequest
from durabench.models.suite_run import ProgressOutput
from durabench.planning.rows import plan_rows, request_rows
from starter.console import plan_table
from workflows.run_details import (
    current_details,
    markdown_rows,
    pair_details,
    request_details,
    start_story,
    start_summary,
)

PLAN = PlanSummary(
    request=RunRequest(run_id="r1", suite="pytorch", agent=AgentSpec(model="m-1")),
    lanes=("baseline", "sourcegraph_full"),
    task_count=4,
    estimated_agent_hours=1.5,
    results_dir="/runs/r1",
    warnings=("the agent leaves no answer | nothing to grade",),
)


def _shown(markdown: str) -> str:
    """Roughly what a Markdown renderer shows: emphasis marks and escapes out."""
    return re.sub(r"\\(.)", r"\1", markdown.replace("**", ""))


def test_every_label_is_followed_by_its_value_after_a_colon() -> None:
    """No renderer can run a label into its value ("approval timeout86400 s"): each row of
    every details text is ``label: value`` on a line of its own."""
    rows = [*plan_rows(PLAN), *request_rows(PLAN.request)]
    waiting = ProgressOutput(run_id="r1", phase="awaiting_approval")
    texts = {
        "rows": markdown_rows(rows),
        "static details, planned": request_details(PLAN.request, PLAN),
        "static details, as asked": request_details(PLAN.request),
        "current details": current_details(waiting, PLAN),
    }
    for name, text in texts.items():
        shown = _shown(text)
        assert "|" not in text.replace("\\|", ""), (name, text)  # no table anywhere
        for row in plan_rows(PLAN) if "as asked" not in name else request_rows(PLAN.request):
            assert f"{row.key}: {row.value}" in shown, (name, row)
    alert = "- ⚠ **warning: the agent leaves no answer \\| nothing to grade**"
    assert alert in markdown_rows(plan_rows(PLAN)).splitlines()  # its own "|" escaped


def test_the_story_says_what_it_costs_and_how_to_approve_with_a_name() -> None:
    story = start_story(PLAN.request, PLAN)
    assert (
        story[0]
        == "pytorch · oracle · m-1 · paired: 4 tasks × 2 lanes (baseline, sourcegraph_full)"
    )
    assert story[1].startswith("agent time: at most 1.50 agent-hours (8 agent sessions")
    assert story[2] == "nothing starts until a person approves: python -m starter approve r1"
    assert '{"approver": "your name"}' in story[3]
    assert start_summary(PLAN.request, PLAN).startswith(f"{story[0]}; {story[1]}; {story[2]}")
    unplanned = start_story(PLAN.request, None)
    assert unplanned[0] == "pytorch · oracle · m-1 · paired"
    assert "python -m starter status r1" in unplanned[1]


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
