"""The check that guards spending: an approval that restates a parameter must match the plan.

The plan below sets every parameter a person confirms to a value that is not its default,
so an approval that leaves a field out can never match it by accident.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.models.agent import AgentSpec
from durabench.models.cost import CostEstimate
from durabench.models.parallelism import Parallelism
from durabench.models.run import Approval, PlanSummary, RunRequest
from durabench.planning.approval import approval_mismatches

PLANNED: dict[str, Any] = {
    "model": "m-planned",
    "suite": "pytorch",
    "config_mode": "full_only",
    "full_config": "sourcegraph_custom",
    "parallel": 5,
    "category": "official",
    "cost": "12.40-48.00",
}
"""The plan's value of each parameter an approval may restate."""

OTHER: dict[str, Any] = {
    "model": "m-other",
    "suite": "django",
    "config_mode": "paired",
    "full_config": "sourcegraph_full",
    "parallel": 2,
    "category": "staging",
    "cost": "12.40-48.01",
}
"""A valid value that differs from the plan's, per parameter (the defaults, mostly)."""


def plan(**request: Any) -> PlanSummary:
    fields = {k: v for k, v in PLANNED.items() if k not in ("model", "cost")} | request
    cost = CostEstimate(
        sessions=6, low_usd=12.4, high_usd=48.0, session_high_usd=8.0, basis="3 earlier sessions"
    )
    return PlanSummary(
        cost=cost,
        request=RunRequest(run_id="r1", agent=AgentSpec(model=PLANNED["model"]), **fields),
        lanes=("sourcegraph_custom",),
        task_count=3,
        estimated_agent_hours=1.0,
        results_dir="/runs/r1",
    )


def test_an_approval_that_restates_nothing_approves_the_plan_as_it_is() -> None:
    assert approval_mismatches(plan(), Approval()) == []
    assert approval_mismatches(plan(), Approval(approver="ann", note="go")) == []


def test_an_approval_that_restates_every_parameter_rightly_matches() -> None:
    assert approval_mismatches(plan(), Approval(**PLANNED)) == []


@pytest.mark.parametrize("name", sorted(PLANNED))
def test_each_parameter_restated_alone_is_checked(name: str) -> None:
    assert approval_mismatches(plan(), Approval(**{name: PLANNED[name]})) == []
    assert approval_mismatches(plan(), Approval(**{name: OTHER[name]})) == [
        f"{name} is {PLANNED[name]!r} in the plan, the approval says {OTHER[name]!r}"
    ]


def test_every_wrong_parameter_is_named_once_in_the_plan_s_order() -> None:
    problems = approval_mismatches(plan(), Approval(**OTHER))
    assert [line.split(" ", 1)[0] for line in problems] == [
        "model",
        "suite",
        "config_mode",
        "full_config",
        "parallel",
        "category",
        "cost",
    ]


def test_one_wrong_parameter_among_right_ones_is_still_refused() -> None:
    approval = Approval(**(PLANNED | {"parallel": 4}))
    assert approval_mismatches(plan(), approval) == [
        "parallel is 5 in the plan, the approval says 4"
    ]


def test_a_selection_file_s_run_answers_to_the_file_and_to_its_suite() -> None:
    selected = plan(selection="selections/hard.json")
    assert approval_mismatches(selected, Approval(suite="selections/hard.json")) == []
    assert approval_mismatches(selected, Approval(suite="pytorch")) == []
    assert approval_mismatches(selected, Approval(suite="django")) == [
        "suite is 'selections/hard.json' in the plan, the approval says 'django'"
    ]


def test_the_suite_s_second_name_stands_in_for_the_suite_only() -> None:
    """The selection file's suite name is accepted for ``suite``, for no other parameter."""
    selected = plan(selection="selections/hard.json", full_config="pytorch")
    assert approval_mismatches(selected, Approval(full_config="pytorch")) == []
    assert approval_mismatches(selected, Approval(model="pytorch")) == [
        "model is 'm-planned' in the plan, the approval says 'pytorch'"
    ]


def test_a_dataset_file_s_run_answers_to_the_file() -> None:
    from_file = plan(dataset_file="tasks.jsonl")
    assert approval_mismatches(from_file, Approval(suite="tasks.jsonl")) == []
    assert approval_mismatches(from_file, Approval(suite="other.jsonl")) == [
        "suite is 'tasks.jsonl' in the plan, the approval says 'other.jsonl'"
    ]


def test_a_dated_snapshot_of_the_planned_model_is_another_model() -> None:
    """The plan runs ``claude-sonnet-4-5``; an approval of ``claude-sonnet-4-5-20250929``
    approves a model the plan does not run (the gateway would call it a match when served,
    but a person restating the model must restate the plan's own id)."""
    planned = plan().model_copy(
        update={
            "request": plan().request.model_copy(
                update={"agent": AgentSpec(model="claude-sonnet-4-5")}
            )
        }
    )
    assert approval_mismatches(planned, Approval(model="claude-sonnet-4-5")) == []
    assert approval_mismatches(planned, Approval(model="claude-sonnet-4-5-20250929")) == [
        "model is 'claude-sonnet-4-5' in the plan, the approval says 'claude-sonnet-4-5-20250929'"
    ]


def test_a_derived_parallelism_is_checked_against_the_derived_number() -> None:
    """No ``--parallel``: the request's ``parallel`` is None and the plan derived 3 (the
    account slots bound it). Restating 3 matches; restating 4 is refused against 3."""
    derived = plan(parallel=None).model_copy(
        update={"parallelism": Parallelism(parallel=3, bound_by="accounts", derived=3)}
    )
    assert derived.request.parallel is None
    assert approval_mismatches(derived, Approval(parallel=3)) == []
    assert approval_mismatches(derived, Approval(parallel=4)) == [
        "parallel is 3 in the plan, the approval says 4"
    ]


@pytest.mark.parametrize(
    ("restated", "line"),
    [
        ({"model": ""}, "model is 'm-planned' in the plan, the approval says ''"),
        ({"parallel": 0}, "parallel is 5 in the plan, the approval says 0"),
        ({"suite": ""}, "suite is 'pytorch' in the plan, the approval says ''"),
        (
            {"full_config": ""},
            "full_config is 'sourcegraph_custom' in the plan, the approval says ''",
        ),
    ],
)
def test_an_empty_or_zero_value_restates_something(restated: dict[str, Any], line: str) -> None:
    """Only a field left out (None) restates nothing; ``""`` and ``0`` are values, and wrong."""
    assert approval_mismatches(plan(), Approval(**restated)) == [line]


def test_a_run_is_approved_at_its_price_and_an_unpriced_plan_answers_to_unpriced() -> None:
    """The price line restated: ``12.40-48.00`` matches, a cent more does not; a plan of an
    unpriced model restates as ``unpriced``, never as ``0.00-0.00``."""
    assert approval_mismatches(plan(), Approval(cost="12.40-48.00")) == []
    unpriced = plan().model_copy(
        update={
            "cost": CostEstimate(
                sessions=6, low_usd=None, high_usd=None, session_high_usd=None, basis="no price"
            )
        }
    )
    assert approval_mismatches(unpriced, Approval(cost="unpriced")) == []
    assert approval_mismatches(unpriced, Approval(cost="0.00-0.00")) == [
        "cost is 'unpriced' in the plan, the approval says '0.00-0.00'"
    ]
