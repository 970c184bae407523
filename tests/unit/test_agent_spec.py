"""One ``AgentSpec`` names the agent, its model and options, from the request to the attempt."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from durabench.models.agent import AgentSpec
from durabench.models.run import PlanSummary, RunRequest


def test_a_request_carries_the_agent_as_one_object() -> None:
    request = RunRequest(
        run_id="r", suite="s", agent=AgentSpec(name="claude-code", model="m", options={"a": "1"})
    )
    wire = json.loads(request.model_dump_json())
    assert wire["agent"] == {"name": "claude-code", "model": "m", "options": {"a": "1"}}
    assert "model" not in wire and "agent_options" not in wire


def test_an_agent_defaults_to_the_oracle_without_a_model() -> None:
    assert RunRequest(run_id="r", suite="s").agent == AgentSpec(name="oracle", model="none")


def test_a_plan_written_before_the_spec_reads_into_one() -> None:
    """Earlier runs' ``plan.json`` (read for counterparts and reruns) kept the flat fields."""
    old = {
        "request": {
            "run_id": "r",
            "suite": "s",
            "agent": "codex",
            "model": "gpt-5-codex",
            "agent_options": {"version": "0.1"},
        },
        "lanes": ["baseline"],
        "task_count": 1,
        "estimated_agent_hours": 0.1,
        "results_dir": "/x",
    }
    plan = PlanSummary.model_validate(old)
    assert plan.request.agent == AgentSpec(
        name="codex", model="gpt-5-codex", options={"version": "0.1"}
    )


def test_a_flat_request_with_only_a_model_keeps_it() -> None:
    request = RunRequest.model_validate({"run_id": "r", "suite": "s", "model": "m"})
    assert request.agent == AgentSpec(name="oracle", model="m")


def test_a_model_beside_a_spec_is_refused_not_dropped() -> None:
    with pytest.raises(ValidationError, match="inside agent"):
        RunRequest.model_validate(
            {"run_id": "r", "suite": "s", "agent": {"name": "x"}, "model": "m"}
        )
