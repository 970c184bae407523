"""An agent option the workers would refuse is refused at plan time, once, with the fix.

A mount outside ``DURABENCH_HOME/mounts/`` is refused by every worker for every attempt:
found there, it cost each attempt its infra retries and every pair was excluded. The plan
runs the workers' own check of an attempt's input, so the run never starts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.planning.plan import check_request
from durabench.settings.values import Settings
from tests.unit_plan import unit_plan_activities


def _request(tmp_path: Path, marker_dir: Path) -> RunRequest:
    plan = tmp_path / "replay" / "plan.json"
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps({"cases": [{"exit_code": 0}]}))
    options = {"plan": str(plan), "marker_dir": str(marker_dir)}
    return RunRequest(run_id="r1", suite="pytorch", agent=AgentSpec(name="replay", options=options))


async def test_the_workers_plan_refuses_a_mount_outside_the_mounts_root(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    outside = _request(tmp_path, tmp_path / "markers")
    with pytest.raises(ApplicationError, match="mount host directory") as err:
        await ActivityEnvironment().run(unit_plan_activities(settings).plan_run, outside)
    assert (err.value.type, err.value.non_retryable) == ("ConfigError", True)
    assert "DURABENCH_HOME/mounts/" in str(err.value)

    inside = _request(tmp_path, settings.home / "mounts" / "markers")
    summary = await ActivityEnvironment().run(unit_plan_activities(settings).plan_run, inside)
    assert summary.task_count > 0


def test_the_cli_refuses_it_before_a_run_when_its_worker_plans(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    outside = _request(tmp_path, tmp_path / "markers")
    with pytest.raises(ConfigError, match="mount host directory"):
        check_request(outside, settings)
    check_request(outside, settings, here=False)  # remote workers have homes of their own
    check_request(_request(tmp_path, settings.home / "mounts" / "m"), settings)
