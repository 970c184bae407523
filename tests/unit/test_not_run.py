"""What a capped run leaves unrun: listed in the report, with the command that goes on."""

from __future__ import annotations

from durabench.models.run import RunPlan, TaskRef
from durabench.models.suite_run import RunOutcome
from durabench.results.not_run import continue_command, cut_by_cap, not_run, not_run_lines
from durabench.results.report import render_markdown
from starter.run import spend_cap_reached
from tests.unit.results_set import attempt, hand_result


def _capped(cap: float | None, extra: tuple[str, ...] = ("t8", "t9")):  # type: ignore[no-untyped-def]
    result = hand_result()
    plan: RunPlan = result.plan
    request = plan.request.model_copy(update={"max_spend_usd": cap})
    tasks = (*plan.tasks, *(TaskRef(task_id=t, task_dir=f"/{t}") for t in extra))
    plan = plan.model_copy(update={"request": request, "tasks": tasks, "task_count": len(tasks)})
    return result.model_copy(update={"plan": plan})


def test_pairs_with_no_attempt_of_a_capped_run_are_not_run_in_plan_order() -> None:
    result = _capped(7.5)
    assert not_run(result) == ["t8", "t9"]
    assert not_run(_capped(None)) == []  # an uncapped run leaves nothing unrun by a cap
    assert continue_command(result.plan.request) == (
        "python -m starter run --rerun infra --from hand --agent replay --model m --max-spend 15.00"
    )


def test_the_report_lists_them_and_the_pairs_the_cap_cut_short() -> None:
    result = _capped(7.5)
    cut = attempt("t8", "baseline", 1, "infra_spend_cap", None)
    result = result.model_copy(update={"attempts": (*result.attempts, cut)})
    assert not_run(result) == ["t9"] and cut_by_cap(result) == ["t8"]
    lines = not_run_lines(result)
    assert "## Not run: spend cap" in lines
    assert "1 pair(s) were not started and 1 cut short: the run's spend cap ($7.50)" in lines[3]
    assert "- t9: not run: spend cap" in lines
    assert "- t8: cut short by the spend cap (excluded)" in lines


def test_the_markdown_report_carries_the_section_only_for_a_capped_run_cut_by_its_cap() -> None:
    hand = hand_result()
    task = hand.plan.tasks[0].task_id
    capped = _capped(7.5, extra=())
    cut = attempt(task, "baseline", 9, "infra_spend_cap", None)
    capped = capped.model_copy(update={"attempts": (*capped.attempts, cut)})
    assert f"- {task}: cut short by the spend cap" in render_markdown(capped, hand.scorecard)  # type: ignore[arg-type]
    assert "## Not run" not in render_markdown(hand, hand.scorecard)  # type: ignore[arg-type]


def test_the_terminal_names_what_was_not_run_and_how_to_go_on() -> None:
    outcome = RunOutcome(
        run_id="hand",
        status="completed",
        report_path="/runs/hand/report.md",
        not_run=2,
        continue_command="python -m starter run --rerun infra --from hand --max-spend 15.00",
    )
    said = spend_cap_reached(outcome)
    assert "2 pair(s) not run or cut short (listed in /runs/hand/report.md)" in said
    assert said.endswith("--rerun infra --from hand --max-spend 15.00")
