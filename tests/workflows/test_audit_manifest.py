"""The manifests ``record_attempt`` and ``write_report`` return are in history, and held.

Issue 47 defects 5 and 6 through a real run: plan.json's tasks and a file a reader sees
(no number is read from it) added after the run are named by ``starter audit``; the unit
tests (tests/unit/test_audit_manifest.py) edit every kind of file.
"""

from __future__ import annotations

import json

from durabench.models.agent import AgentSpec
from durabench.settings.paths import RunPaths
from starter.audit import audit_main
from tests.workflows.harness import Disk

TASK = "tensor-gelu-001"


async def test_an_edit_of_the_plan_and_a_file_added_to_an_attempt_are_named(disk: Disk) -> None:
    outcome = await disk.run(suite="pytorch", agent=AgentSpec(model="m-1"))
    assert outcome.status == "completed"
    paths = RunPaths.for_run(disk.settings.runs_dir, outcome.run_id)
    report = await audit_main(outcome.run_id, client=disk.client, settings=disk.settings)
    assert (report.lines(), report.notes) == ((), ())

    plan = json.loads(paths.plan.read_text())
    plan["tasks"][0]["agent_timeout_sec"] = 1e9
    paths.plan.write_text(json.dumps(plan, indent=2))
    attempt = paths.attempt(TASK, "baseline", 1)
    (attempt / "verifier" / "planted.txt").write_text("all pass\n")

    lines = (await audit_main(outcome.run_id, client=disk.client, settings=disk.settings)).lines()
    assert any(
        line.startswith("[ledger] plan.json: changed (")
        and line.endswith(" after the run's report was written")
        for line in lines
    ), lines
    assert (
        f"[ledger] {TASK}/baseline/attempt-1: verifier/planted.txt was added after the attempt "
        "was recorded"
    ) in lines
