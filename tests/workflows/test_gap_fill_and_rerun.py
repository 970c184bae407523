"""Gap-fill and reruns through ``starter run`` on a real dev server.

Planning and results are the real activities, on disk under the test's home; only the
sandbox is faked (no Docker needed), so the refusals are the ones a user sees.
"""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import WorkflowFailureError

from durabench.models.agent import AgentSpec
from durabench.settings.paths import RunPaths
from starter.options import failure_message
from tests.workflows.harness import Disk

M1, M2 = AgentSpec(model="m-1"), AgentSpec(model="m-2")


async def _refusal(disk: Disk, **request: Any) -> str:
    with pytest.raises(WorkflowFailureError) as failed:
        await disk.run(**request)
    return failure_message(failed.value)


async def test_gap_fill_is_refused_until_a_counterpart_exists(disk: Disk) -> None:
    refused = await _refusal(disk, suite="pytorch", agent=M1, config_mode="baseline_only")
    assert "baseline_only is gap-fill, but 4 task(s) have no valid sourcegraph_full" in refused
    assert "tensor-broadcast-001" in refused and "ALLOW_UNPAIRED_SINGLE_CONFIG=true" in refused

    # An earlier paired run whose full lane ended infra for one task: no counterpart there.
    disk.rec.classes["tensor-gelu-001/sourcegraph_full"] = ["infra_rate_limit"]
    earlier = await disk.run(suite="pytorch", agent=M1, infra_retries=0)
    assert earlier.status == "completed"

    refused = await _refusal(disk, suite="pytorch", agent=M1, config_mode="baseline_only")
    assert "1 task(s) have no valid sourcegraph_full counterpart" in refused
    assert "tensor-gelu-001" in refused
    # Another model's or category's runs are no counterparts.
    refused = await _refusal(disk, suite="pytorch", agent=M2, config_mode="baseline_only")
    assert "4 task(s)" in refused

    disk.rec.classes.clear()
    bypass = await disk.run(
        suite="pytorch", agent=M1, config_mode="baseline_only", allow_unpaired=True
    )
    plan = disk.plan(bypass.run_id)
    assert plan.lanes == ("baseline",)
    assert plan.unpaired == ("tensor-gelu-001",)
    assert {c.task_id: c.run_id for c in plan.counterparts} == {
        t: earlier.run_id
        for t in ("tensor-broadcast-001", "tensor-matmul-shape-001", "tensor-mean-reduce-001")
    }
    report = RunPaths.for_run(disk.settings.runs_dir, bypass.run_id).report_md.read_text()
    assert "unpaired: 1 task(s) ran without a counterpart" in report

    # The full lane of the missing task, run alone under the bypass, completes the set.
    await disk.run(suite="pytorch", agent=M1, config_mode="full_only", allow_unpaired=True)
    filled = await disk.run(suite="pytorch", agent=M1, config_mode="baseline_only")
    assert disk.plan(filled.run_id).unpaired == ()


async def test_rerun_takes_exactly_the_failed_tasks_and_keeps_pairs(disk: Disk) -> None:
    disk.rec.rewards["tensor-gelu-001/baseline"] = 0.0
    disk.rec.classes["tensor-matmul-shape-001/sourcegraph_full"] = ["infra_connection"]
    first = await disk.run(suite="pytorch", agent=M1, infra_retries=0, category="official")
    disk.rec.rewards.clear()
    disk.rec.classes.clear()

    failed = await disk.run(suite="", rerun="failed", rerun_of=first.run_id, parallel=3)
    plan = disk.plan(failed.run_id)
    assert [t.task_id for t in plan.tasks] == ["tensor-gelu-001", "tensor-matmul-shape-001"]
    assert plan.lanes == ("baseline", "sourcegraph_full")
    assert (plan.request.rerun_of, plan.request.agent.model, plan.request.category) == (
        first.run_id,
        "m-1",
        "official",
    )
    assert plan.request.parallel == 3
    report = RunPaths.for_run(disk.settings.runs_dir, failed.run_id).report_md.read_text()
    assert f"rerun of run `{first.run_id}` (failed tasks)" in report

    infra = await disk.run(suite="", rerun="infra", rerun_of=first.run_id)
    assert [t.task_id for t in disk.plan(infra.run_id).tasks] == ["tensor-matmul-shape-001"]
    refused = await _refusal(disk, suite="", rerun="infra", rerun_of=infra.run_id)
    assert f"run {infra.run_id} has no infra tasks to run again" in refused
    refused = await _refusal(disk, suite="", rerun="all", rerun_of="no-such-run")
    assert "no run 'no-such-run'" in refused
