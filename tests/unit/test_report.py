"""The report's numbers against a results set worked out by hand (see results_set.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.models.results import RunResult
from durabench.results.report import headline, render_markdown
from durabench.results.report_html import render_html
from durabench.results.scoring import compute_scorecard
from durabench.settings.paths import RunPaths
from tests.unit.results_set import LANES, TASKS, hand_result


def test_cells_best_mean_daggers_and_missing_reasons() -> None:
    card = hand_result().scorecard
    assert card is not None
    cells = {(c.task_id, c.lane): c for c in card.cells}
    t3 = cells[("t3", "baseline")]
    assert (t3.best, t3.mean, t3.included) == (1.0, 0.5, 2)
    assert t3.daggers == ("attempt 2: model_agent_error after 42 s",)
    assert cells[("t2", "baseline")].daggers == ("attempt 1: model_timeout after 600 s",)
    assert cells[("t3", "sourcegraph_full")].mean == 0.0  # the infra attempt does not count
    t4 = cells[("t4", "sourcegraph_full")]
    assert (t4.best, t4.mean, t4.missing_reason) == (
        None,
        None,
        "2 attempt(s), last infra_usage_cap",
    )
    assert cells[("t5", "sourcegraph_full")].missing_reason == (
        "no reward: RewardFileMissing: no reward.txt"
    )


def test_paired_comparison_by_hand() -> None:
    card = hand_result().scorecard
    assert card is not None and card.comparison is not None
    c = card.comparison
    assert [(d.task_id, d.delta) for d in c.tasks] == [("t1", 0.0), ("t2", 1.0), ("t3", -0.5)]
    assert c.mean_delta == pytest.approx(1 / 6)
    # n=3: a resample of all -0.5 (or all +1) has probability 1/27 > 2.5%, so the
    # percentile bounds are exactly the extremes.
    assert (c.ci_low, c.ci_high) == (-0.5, 1.0)
    assert (c.both_pass, c.both_fail, c.baseline_only, c.full_only) == (1, 1, 0, 1)
    assert c.mcnemar_p == 1.0
    assert (c.dropped_excluded, c.dropped_unscored) == (1, 1)
    assert (c.resamples, c.pass_threshold) == (10_000, 1.0)


def test_excluded_attempts_and_totals() -> None:
    card = hand_result().scorecard
    assert card is not None
    assert [(e.task_id, e.lane, e.attempt, e.exit_class) for e in card.excluded_attempts] == [
        ("t3", "sourcegraph_full", 1, "infra_rate_limit"),
        ("t4", "sourcegraph_full", 1, "infra_usage_cap"),
        ("t4", "sourcegraph_full", 2, "infra_usage_cap"),
        ("t5", "sourcegraph_full", 1, "completed"),
    ]
    base, full, everything = card.totals
    assert (base.lane, base.attempts, base.input_tokens, base.cost_usd) == (
        "baseline",
        6,
        6000,
        3.0,
    )
    assert (full.attempts, full.cost_usd, full.cost_unreported) == (7, 3.0, 1)
    assert (everything.lane, everything.attempts, everything.output_tokens) == ("all", 13, 1300)


def test_markdown_shows_everything() -> None:
    result = hand_result()
    assert result.scorecard is not None
    md = render_markdown(result, result.scorecard)
    assert "| t3 | 1.00 \\| 0.50 †2 | 0.00 \\| 0.00 |" in md
    assert "1. t2 / baseline attempt 1: model_timeout after 600 s" in md
    assert (
        "| t4 (pair excluded) | 1.00 \\| 1.00 | - \\| - (2 attempt(s), last infra_usage_cap) |"
        in md
    )
    assert "mean difference (sourcegraph_full − baseline): +0.167, 95% CI [-0.500, +1.000]" in md
    assert "10,000 resamples, seed" in md and "McNemar exact p = 1" in md
    assert "| all | 13 | 13,000 | 1,300 | 0 | 0 | 6.00 (1 unreported) |" in md
    assert "⚠ claims_complete, false_completion | Fixed! |" in md
    assert "⚠ 1 false completion(s)" in md
    assert "- t4 / sourcegraph_full / attempt 2: infra_usage_cap: infra_usage_cap reason" in md
    assert "## Excluded pairs\n\n- t4: sourcegraph_full ended infra_usage_cap" in md
    assert "- agent CLI version: baseline 2.1.332; sourcegraph_full 2.0.14, 2.1.332" in md
    assert (
        "- agent image: baseline sha256:aaaaaaaaaaaa; "
        "sourcegraph_full sha256:aaaaaaaaaaaa, sha256:bbbbbbbbbbbb"
    ) in md
    assert "**1 task(s) ran different CLI versions across attempts: t3 (2.0.14, 2.1.332)" in md


def test_headline_says_in_plain_words_when_infrastructure_decided() -> None:
    result = hand_result()
    some = headline(result)
    assert some is not None and some.startswith("1 of 5 pairs were excluded")
    assert "after 2 retries per arm (2 infra attempts: 2 infra_usage_cap)" in some  # t4's
    assert "--rerun infra --from hand" in some and f"**{some}**" in render_markdown(
        result,
        result.scorecard,  # type: ignore[arg-type]
    )
    tasks = tuple(t.task_id for t in result.plan.tasks)
    everything = result.model_copy(update={"excluded": dict.fromkeys(tasks, "infra")})
    none = headline(everything)
    assert none is not None and none.startswith("Nothing was measured")
    assert "(3 infra attempts: 2 infra_usage_cap, 1 infra_rate_limit)" in none
    assert "usage cap" in none  # the most common infra class names the likely cause
    assert headline(result.model_copy(update={"excluded": {}})) is None


def test_headline_counts_right_without_retries() -> None:
    result = hand_result()
    request = result.plan.request.model_copy(update={"infra_retries": 0})
    plan = result.plan.model_copy(update={"request": request, "tasks": result.plan.tasks[3:4]})
    attempts = tuple(a for a in result.attempts if a.task_id == "t4" and a.attempt == 1)
    one = result.model_copy(update={"plan": plan, "attempts": attempts})
    said = headline(one)
    assert said is not None and said.startswith("Nothing was measured")
    assert "with infra retries off (--infra-retries 0) (1 infra attempt: 1 infra_usage_cap)" in (
        said
    )
    assert "after its retries" not in said


def test_the_html_report_names_each_lane_s_cli_version_and_mixed_pairs() -> None:
    from durabench.results.report_html import render_html

    result = hand_result()
    assert result.scorecard is not None
    page = render_html(result, result.scorecard)
    assert "<li>agent CLI version: baseline 2.1.332; sourcegraph_full 2.0.14, 2.1.332</li>" in page
    assert "t3 (2.0.14, 2.1.332)" in page


def test_what_the_read_limits_left_out_is_in_both_reports() -> None:
    from durabench.results.report_html import render_html

    result = hand_result()
    assert result.scorecard is not None
    assert "Left out" not in render_markdown(result, result.scorecard)
    note = "/logs/agent/huge.log: 64.0 GiB, over the 64.0 MiB per file, left out"
    first = result.attempts[0].model_copy(update={"left_out": (note,)})
    result = result.model_copy(update={"attempts": (first, *result.attempts[1:])})
    md = render_markdown(result, result.scorecard)
    where = f"{first.task_id} / {first.lane} / attempt {first.attempt}"
    assert f"## Left out by the read limits\n\n- {where}: {note}" in md
    assert "huge.log: 64.0 GiB" in render_html(result, result.scorecard)


def test_html_links_each_attempt_s_directory_and_only_trajectories_that_exist() -> None:
    from durabench.results.report_html import render_html

    result = hand_result()
    assert result.scorecard is not None
    first, second = result.attempts[0], result.attempts[1]
    kept = {(first.task_id, first.lane, first.attempt)}
    html = render_html(result, result.scorecard, trajectories=kept)
    where = f"tasks/{first.task_id}/{first.lane}/attempt-{first.attempt}"
    assert f'<a href="{where}/">{first.attempt}</a>' in html
    assert f'<a href="{where}/agent/trajectory.json">trajectory</a>' in html
    other = f"tasks/{second.task_id}/{second.lane}/attempt-{second.attempt}"
    assert f'<a href="{other}/">' in html
    assert f'<a href="{other}/agent/trajectory.json">' not in html


def test_run_paths_find_the_attempts_with_a_trajectory(tmp_path: Path) -> None:
    paths = RunPaths(root=tmp_path)
    kept = paths.attempt("t1", "baseline", 2)
    (kept / "agent").mkdir(parents=True)
    (kept / "agent" / "trajectory.json").write_text("{}")
    paths.attempt("t1", "mcp", 1).mkdir(parents=True)
    assert paths.attempt_trajectories() == {("t1", "baseline", 2)}


def test_both_reports_render_the_same_totals_table_unreported_cost_included() -> None:
    from durabench.results.report import totals_table
    from durabench.results.report_html import render_html

    result = hand_result()
    assert result.scorecard is not None
    header, rows = totals_table(result.scorecard)
    assert rows[-1] == ["all", "13", "13,000", "1,300", "0", "0", "6.00 (1 unreported)"]
    md = render_markdown(result, result.scorecard)
    html = render_html(result, result.scorecard)
    assert "| " + " | ".join(header) + " |" in md
    for row in rows:
        assert "| " + " | ".join(row) + " |" in md
        assert "".join(f"<td>{cell}</td>" for cell in row) in html


HOSTILE = (
    "docker build failed:\n# Results (verified)\n\n| task | baseline | full |\n|---|---|---|\n"
    "| t9 | 1.00 | 1.00 |\n<script>alert(1)</script> `code` [link](http://x) "
    "\x1b[2J\x1b]0;pwned\x07"
)
"""A build error as a hostile task writes it: a headline, a forged table, HTML, escapes."""


def hostile_result() -> RunResult:
    """The hand results, with ``HOSTILE`` in every text a task, agent or service writes."""
    result = hand_result()
    attempts = tuple(
        a.model_copy(
            update={
                "reason": HOSTILE,
                "last_message": HOSTILE,
                "verifier_error": HOSTILE if a.verifier_error else "",
                "left_out": (HOSTILE,),
                "cli_version": HOSTILE if a.cli_version else None,
            }
        )
        for a in result.attempts
    )
    excluded = {task: f"{why}: {HOSTILE}" for task, why in result.excluded.items()}
    rebuilt = result.model_copy(
        update={
            "attempts": attempts,
            "excluded": excluded,
            "approval": result.approval.model_copy(update={"approver": HOSTILE})
            if result.approval
            else None,
        }
    )
    card = compute_scorecard(attempts, TASKS, LANES, excluded)
    return rebuilt.model_copy(update={"scorecard": card})


def test_text_from_a_task_agent_or_service_is_inert_in_report_md() -> None:
    """No headline, table row, HTML or terminal escape gets into report.md from outside."""
    plain = hand_result()
    noted = tuple(a.model_copy(update={"left_out": ("x",)}) for a in plain.attempts)
    plain = plain.model_copy(update={"attempts": noted})
    assert plain.scorecard is not None
    hostile = hostile_result()
    assert hostile.scorecard is not None
    md = render_markdown(hostile, hostile.scorecard)
    plain_md = render_markdown(plain, plain.scorecard)
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert headings == [line for line in plain_md.splitlines() if line.startswith("#")]
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert not any(line.startswith("| t9") for line in rows)
    assert "<script" not in md and "\x1b" not in md and "\x07" not in md
    assert "[link](" not in md
    assert "&lt;script&gt;" in md and "\\x1b" in md  # shown, not acted on
    page = render_html(hostile, hostile.scorecard)
    assert "<script" not in page and "\x1b" not in page and "&lt;script&gt;" in page
    lines = md.splitlines()
    for line in lines:
        if "docker build failed" in line:
            assert "\\# Results" in line  # the whole message stays on its one line


def test_the_scoring_functions_give_the_numbers_worked_by_hand() -> None:
    """``results_set`` states every number as a literal; the code must arrive at each one."""
    from durabench.results.report import summarize_lanes
    from tests.unit.results_set import ATTEMPTS, EXCLUDED, LANE_SUMMARIES, SCORECARD

    assert summarize_lanes(ATTEMPTS, LANES, EXCLUDED) == LANE_SUMMARIES
    card = compute_scorecard(ATTEMPTS, TASKS, LANES, EXCLUDED)
    assert card.cells == SCORECARD.cells
    assert card.excluded_attempts == SCORECARD.excluded_attempts
    assert card.comparison == SCORECARD.comparison
    assert card.totals == SCORECARD.totals
