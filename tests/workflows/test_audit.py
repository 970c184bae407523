"""``starter audit``: a finished run's files against its Temporal history, on a real server.

Runs go through ``starter run`` with the real plan and result activities (``record_attempt``
writes ``result.json`` and returns its digest into history); the fake sandbox leaves a
reward, transcript and diff in each attempt's directory as collection does. Each test then
changes the files the way a hand (or a bug) would and runs ``python -m starter audit`` as a
user types it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import uuid
from collections.abc import Callable

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from durabench.models.agent import AgentSpec
from durabench.models.audit import AttemptDigest, AuditReport
from durabench.results.dashboard import Dashboard
from durabench.settings.paths import RunPaths
from starter.audit import audit_main
from tests.starter_cli import one_error, starter_async
from tests.workflows.harness import Disk, until
from workflows import attempt_workflow_id

TASK = "tensor-gelu-001"


async def _finished_run(disk: Disk) -> RunPaths:
    outcome = await disk.run(suite="pytorch", agent=AgentSpec(model="m-1"))
    assert outcome.status == "completed"
    return RunPaths.for_run(disk.settings.runs_dir, outcome.run_id)


async def _audit_cli(disk: Disk, run_id: str, *args: str) -> tuple[int, list[str]]:
    proc = await starter_async(disk.settings, "audit", run_id, *args)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout.splitlines()


async def test_a_finished_run_audits_clean_and_its_digests_are_in_history(disk: Disk) -> None:
    paths = await _finished_run(disk)
    run_id = paths.root.name

    code, lines = await _audit_cli(disk, run_id)
    assert code == 0, lines
    assert lines == [f"Run {run_id} audits clean (files and history)."]

    code, lines = await _audit_cli(disk, run_id, "--json")
    report = AuditReport.model_validate_json("\n".join(lines))
    assert code == 0 and report.clean and report.findings == () and report.ledger_skipped == ""

    # The digest is record_attempt's result in the attempt's history: the hashes of what it
    # wrote, and nothing of the content.
    attempt = paths.attempt(TASK, "baseline", 1)
    assert json.loads((attempt / "result.json").read_text())["durabench_version"]
    digest, size = await _digest(disk.client, run_id)
    assert digest.files == {
        name: hashlib.sha256((attempt / name).read_bytes()).hexdigest()
        for name in ("result.json", "verifier/reward.txt", "agent/stdout.txt", "submission.patch")
    }
    assert size < 1024


async def _digest(client: Client, run_id: str) -> tuple[AttemptDigest, int]:
    """The digest in history, and its payload's size."""
    handle = client.get_workflow_handle(attempt_workflow_id(run_id, TASK, "baseline", 1))
    for event in (await handle.fetch_history()).events:
        marker = event.marker_recorded_event_attributes  # a local activity's result
        payloads = marker.details["result"].payloads if "result" in marker.details else []
        payloads = payloads or event.activity_task_completed_event_attributes.result.payloads
        if payloads:
            (value,) = await client.data_converter.decode(payloads)
            if isinstance(value, dict) and "files" in value:
                return AttemptDigest.model_validate(value), payloads[0].ByteSize()
    raise AssertionError("record_attempt returned no digest into history")


def _edit_reward(paths: RunPaths) -> None:
    attempt = paths.attempt(TASK, "baseline", 1)
    (attempt / "verifier" / "reward.txt").write_text("0.0\n")
    result = json.loads((attempt / "result.json").read_text())
    (attempt / "result.json").write_text(json.dumps({**result, "reward": 0.0}, indent=2))


def _delete_attempt(paths: RunPaths) -> None:
    shutil.rmtree(paths.attempt(TASK, "sourcegraph_full", 1))


def _add_attempt(paths: RunPaths) -> None:
    real, fake = paths.attempt(TASK, "baseline", 1), paths.attempt(TASK, "baseline", 2)
    shutil.copytree(real, fake)
    result = json.loads((fake / "result.json").read_text())
    (fake / "result.json").write_text(json.dumps({**result, "attempt": 2}, indent=2))


def _change_results(paths: RunPaths) -> None:
    results = json.loads(paths.results.read_text())
    for a in results["attempts"]:
        if (a["task_id"], a["lane"]) == (TASK, "sourcegraph_full"):
            a["reward"] = 0.5
    for lane in results["lanes"]:
        if lane["lane"] == "sourcegraph_full":
            lane["mean_reward"] = 0.875
    paths.results.write_text(json.dumps(results, indent=2))


def _forge_approver(paths: RunPaths) -> None:
    for path in (paths.run, paths.results):
        data = json.loads(path.read_text())
        data["approval"]["approver"] = "the director"
        path.write_text(json.dumps(data, indent=2))


def _drop_planned_task(paths: RunPaths) -> None:
    """A task left out of plan.json and its attempts deleted: as if it never ran."""
    plan = json.loads(paths.plan.read_text())
    gone = plan["tasks"].pop()
    plan["task_count"] -= 1
    paths.plan.write_text(json.dumps(plan, indent=2))
    shutil.rmtree(paths.root / "tasks" / gone["task_id"])


TAMPERING: dict[str, tuple[Callable[[RunPaths], None], list[str]]] = {
    "forged approver": (
        _forge_approver,
        [
            "[ledger] run.json: its approval is not the one history recorded: approver "
            "('the director' in run.json",
            "[results] results.json: its approval is not the run's: approver ('the director' "
            "in results.json",
        ],
    ),
    "dropped task": (
        _drop_planned_task,
        [
            "[ledger] plan.json: it is not the plan history recorded: task_count",
            "[ledger] plan.json: its tasks are not the ones the run handed out (added none, "
            "left out [",
        ],
    ),
    "edited reward": (
        _edit_reward,
        [
            f"[ledger] {TASK}/baseline/attempt-1: result.json changed after the attempt was "
            "recorded",
            f"[ledger] {TASK}/baseline/attempt-1: verifier/reward.txt changed after the "
            "attempt was recorded",
            f"[results] results.json: {TASK}/baseline/attempt-1 differs from its result.json "
            "in reward (1.0 in results.json, 0.0 in result.json)",
        ],
    ),
    "deleted attempt": (
        _delete_attempt,
        [
            f"[ledger] {TASK}/sourcegraph_full/attempt-1: recorded in history, but its "
            "result.json is gone: deleted after the run",
            f"[pairs] {TASK}/sourcegraph_full: no attempt of this planned lane ended",
        ],
    ),
    "added attempt": (
        _add_attempt,
        [
            f"[ledger] {TASK}/baseline/attempt-2: no such attempt workflow in the run's "
            "history: it was added after the fact",
            f"[pairs] {TASK}/baseline/attempt-1: ended completed, yet attempt 2 follows",
        ],
    ),
    "changed results.json": (
        _change_results,
        [
            f"[results] results.json: {TASK}/sourcegraph_full/attempt-1 differs from its "
            "result.json in reward (0.5 in results.json, 1.0 in result.json)",
            "[results] results.json: field lanes does not follow from the attempts",
        ],
    ),
}


@pytest.mark.parametrize("case", list(TAMPERING))
async def test_a_changed_run_fails_its_audit_naming_the_change(disk: Disk, case: str) -> None:
    paths = await _finished_run(disk)
    tamper, expected = TAMPERING[case]
    tamper(paths)
    code, lines = await _audit_cli(disk, paths.root.name)
    assert code == 1, lines
    for line in expected:
        assert any(got.startswith(line) for got in lines), (line, lines)
    assert lines[-1].startswith(f"Run {paths.root.name}: ")


async def test_an_attempt_its_pair_recorded_is_in_the_ledger(disk: Disk) -> None:
    """An attempt cancelled by hand is recorded by its pair: the digest is in the pair's."""
    agent = disk.rec.gates[f"run_agent/{TASK}/baseline"] = asyncio.Event()
    run_id = f"r-{uuid.uuid4().hex[:6]}"
    running = asyncio.create_task(disk.run(run_id, suite="pytorch", agent=AgentSpec(model="m-1")))
    await until(lambda: (TASK, "baseline") in disk.rec.live, "the baseline agent runs")
    await disk.client.get_workflow_handle(attempt_workflow_id(run_id, TASK, "baseline", 1)).cancel()
    paths = RunPaths.for_run(disk.settings.runs_dir, run_id)
    cancelled = paths.attempt(TASK, "baseline", 1) / "result.json"
    await until(cancelled.exists, "the pair records the cancelled attempt")
    agent.set()
    assert (await running).status == "completed"
    assert "cancelled" in json.loads(cancelled.read_text())["reason"]

    report = await audit_main(run_id, client=disk.client, settings=disk.settings)
    assert (report.findings, report.notes) == ((), ())
    cancelled.write_text(cancelled.read_text().replace("cancelled", "finished"))
    report = await audit_main(run_id, client=disk.client, settings=disk.settings)
    assert report.lines()[0].startswith(
        f"[ledger] {TASK}/baseline/attempt-1: result.json changed after the attempt was recorded"
    )


async def test_without_history_the_files_alone_are_checked(
    disk: Disk, skipping: WorkflowEnvironment
) -> None:
    paths = await _finished_run(disk)
    run_id = paths.root.name
    elsewhere = skipping.client  # another server: it never saw the run, as after retention

    report = await audit_main(run_id, client=elsewhere, settings=disk.settings)
    assert report.clean, report.findings
    assert f"has no history of run/{run_id}" in report.ledger_skipped
    assert report.notes == (
        f"ledger check skipped: {report.ledger_skipped}; only the files were checked",
    )

    # What the files show is still found: a lane with no attempt left.
    _delete_attempt(paths)
    report = await audit_main(run_id, client=elsewhere, settings=disk.settings)
    lines = report.lines()
    assert lines[0] == (
        f"[pairs] {TASK}/sourcegraph_full: no attempt of this planned lane ended: its "
        "attempts were deleted, or the run did not finish"
    )
    assert (
        f"[results] results.json: lists {TASK}/sourcegraph_full/attempt-1, which has no "
        "result.json" in lines
    )
    assert not any(line.startswith("[ledger]") for line in lines)


async def test_publish_runs_the_audit_and_refuses_a_run_that_fails_it(disk: Disk) -> None:
    paths = await _finished_run(disk)
    run_id, board = paths.root.name, disk.settings.home / "dashboard.json"
    proc = await starter_async(disk.settings, "publish", run_id)
    assert proc.returncode == 0, proc.stderr
    (entry,) = Dashboard.model_validate_json(board.read_text()).runs
    assert (entry.ledger_checked, entry.forced) == (True, ())

    # The published entry is held against the attempts too.
    text = json.loads(board.read_text())
    text["runs"][0]["pairs_compared"] = 40
    board.write_text(json.dumps(text))
    code, lines = await _audit_cli(disk, run_id)
    assert code == 1
    assert lines[0] == (
        f"[results] {board}: the run's entry differs in pairs_compared (40 in the entry, 4 "
        "in the attempts); `starter publish` rebuilds it"
    )
    assert (await starter_async(disk.settings, "publish", run_id)).returncode == 0
    assert (await _audit_cli(disk, run_id))[0] == 0

    _edit_reward(paths)
    published = board.read_bytes()
    refused = one_error(await starter_async(disk.settings, "publish", run_id))
    assert f"run {run_id} is not published: its audit found " in refused
    assert f"problem(s), first [ledger] {TASK}/baseline/attempt-1: result.json changed" in refused
    assert "or publish it anyway with --force" in refused
    assert board.read_bytes() == published

    proc = await starter_async(disk.settings, "publish", run_id, "--force")
    assert proc.returncode == 0, proc.stderr
    assert "forced past " in proc.stdout, proc.stdout
    (entry,) = Dashboard.model_validate_json(board.read_text()).runs
    assert (
        f"[ledger] {TASK}/baseline/attempt-1: result.json changed after the attempt was "
        "recorded" in " ".join(entry.forced)
    )
