"""``starter audit`` reads the history of the run it is asked for, whatever its files say.

Issue 47 defect 3: ``run_id`` changed in plan.json and run.json, a reward lowered and the
results rebuilt; the audit looked for the history under the new id, found none, and
passed "files only", and publish took the run.
"""

from __future__ import annotations

import json

from durabench.models.agent import AgentSpec
from durabench.models.run import Approval
from durabench.models.suite_run import RecordRunInput
from durabench.results.files import build_results, write_reports
from durabench.settings.paths import RunPaths
from starter.audit import audit_main
from tests.starter_cli import one_error, starter_async
from tests.workflows.harness import Disk

TASK = "tensor-gelu-001"


def _renamed(paths: RunPaths, new_id: str) -> None:
    """The run's id changed in its plan and record, a reward lowered, results rebuilt."""
    for path in (paths.plan, paths.run):
        text = path.read_text().replace(f'"run_id": "{paths.root.name}"', f'"run_id": "{new_id}"')
        path.write_text(text)
    attempt = paths.attempt(TASK, "baseline", 1)
    (attempt / "verifier" / "reward.txt").write_text("0.0\n")
    result = json.loads((attempt / "result.json").read_text())
    (attempt / "result.json").write_text(json.dumps({**result, "reward": 0.0}, indent=2))
    approval: Approval | None = RecordRunInput.model_validate_json(paths.run.read_text()).approval
    write_reports(paths, build_results(paths, approval, 1.0))


async def test_a_renamed_run_id_is_named_and_its_history_still_read(disk: Disk) -> None:
    outcome = await disk.run(suite="pytorch", agent=AgentSpec(model="m-1"))
    assert outcome.status == "completed"
    paths = RunPaths.for_run(disk.settings.runs_dir, outcome.run_id)
    run_id = paths.root.name
    _renamed(paths, "official-run-2025")

    report = await audit_main(run_id, client=disk.client, settings=disk.settings)
    assert report.ledger_skipped == "", report.ledger_skipped
    lines = report.lines()
    assert (
        f"[results] plan.json: names run official-run-2025, but it is run {run_id}'s (its "
        "directory, and the history audited): the id was changed after the run"
    ) in lines, lines
    assert (
        f"[results] run.json: names run official-run-2025, but it is run {run_id}'s (its "
        "directory, and the history audited): the id was changed after the run"
    ) in lines, lines
    assert any(
        line.startswith(f"[ledger] {TASK}/baseline/attempt-1: result.json changed")
        for line in lines
    )

    refused = one_error(await starter_async(disk.settings, "publish", run_id))
    assert f"run {run_id} is not published: its audit found " in refused
