"""A suite graded by a benchmark service, end to end: run, grade, score, re-score.

The service is a real HTTP server on loopback (``tests/service_server.py``); the run goes
through ``starter run`` on the real dev server with the real plan, result and service
activities. Only the sandbox is faked, and it never runs the local verifier here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowFailureError

from durabench.models.agent import AgentSpec
from durabench.models.benchmark_service import ServiceRetry, ServiceTarget
from durabench.models.results import RunResult
from durabench.settings.paths import RunPaths
from starter.audit import audit_main
from starter.options import failure_message
from starter.score import score_main
from tests.service_server import ServiceServer
from tests.workflows.harness import Disk
from workflows import run_workflow_id

KEY = "bench-key-0f9a2c77d1"
ANSWERS = {
    "tensor-broadcast-001": "42",
    "tensor-gelu-001": "gelu",
    "tensor-matmul-shape-001": "3x4",
    "tensor-mean-reduce-001": "2.5",
}


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[ServiceServer]:
    monkeypatch.delenv("VALS_AUTH_KEY", raising=False)
    monkeypatch.setenv("BENCHMARK_API_KEY", KEY)  # read by the activities, on the worker
    with ServiceServer(ANSWERS) as server:
        yield server


async def _histories(client: Client, run_id: str) -> str:
    texts = []
    query = f'WorkflowId STARTS_WITH "{run_workflow_id(run_id)}"'
    async for wf in client.list_workflows(query):
        history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        texts.append(history.to_json())
    assert len(texts) == 1 + 4 + 8, "the run, its pairs and their attempts"
    return "\n".join(texts)


async def test_a_service_graded_suite_runs_end_to_end_and_rescores(
    disk: Disk, service: ServiceServer
) -> None:
    # The MCP lane answers every task right; the baseline only the first one.
    for task, answer in ANSWERS.items():
        disk.rec.messages[f"{task}/sourcegraph_full"] = answer
        disk.rec.messages[f"{task}/baseline"] = "wrong"
    disk.rec.messages["tensor-broadcast-001/baseline"] = "42"
    target = ServiceTarget(url=service.url, retry=ServiceRetry(backoff_s=0.01, max_attempts=3))
    outcome = await disk.run(suite="pytorch", agent=AgentSpec(model="m-1"), service=target)
    assert outcome.status == "completed"
    assert "verify" not in disk.rec.calls  # the service grades, not the local verifier

    paths = service.paths()
    assert paths.count("/evaluate-response/") == 8
    assert paths.count("/final-score/") == 1 + 2  # the check at plan time, then each lane
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in service.received)

    run = RunPaths.for_run(disk.settings.runs_dir, outcome.run_id)
    result = RunResult.model_validate_json(run.results.read_text())
    assert result.service_scores == {"baseline": 0.25, "sourcegraph_full": 1.0}
    rewards = {(a.task_id, a.lane): a.reward for a in result.attempts}
    assert rewards[("tensor-broadcast-001", "baseline")] == 1.0
    assert rewards[("tensor-gelu-001", "baseline")] == 0.0
    report = run.report_md.read_text()
    assert f"graded by {service.url} (legacy API)" in report
    assert "service final score, baseline: 0.25" in report

    # The key never entered Temporal, the results or the logs.
    assert KEY not in await _histories(disk.client, outcome.run_id)
    for path in run.root.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path

    # A rerun of the failed tasks goes by the service's grades (the baseline missed three).
    rerun = await disk.run(suite="", rerun="failed", rerun_of=outcome.run_id)
    rerun_plan = disk.plan(rerun.run_id)
    assert [t.task_id for t in rerun_plan.tasks] == [
        "tensor-gelu-001",
        "tensor-matmul-shape-001",
        "tensor-mean-reduce-001",
    ]
    assert rerun_plan.request.rerun_of == outcome.run_id

    # Re-score without running any agent, after the grader changed its mind on one task.
    agents = disk.rec.calls.count("run_agent")
    graded = service.paths().count("/evaluate-response/")
    kept = await score_main(outcome.run_id, settings=disk.settings)
    assert service.paths().count("/evaluate-response/") == graded  # gradings are reused
    assert kept.service_scores == {"baseline": 0.25, "sourcegraph_full": 1.0}
    service.set_answers(ANSWERS | {"tensor-broadcast-001": "41"})
    rescored = await score_main(outcome.run_id, force=True, settings=disk.settings)
    assert service.paths().count("/evaluate-response/") == graded + 8
    assert rescored.service_scores == {"baseline": 0.0, "sourcegraph_full": 0.75}
    assert disk.rec.calls.count("run_agent") == agents
    stored = RunResult.model_validate_json(run.results.read_text())
    assert stored.service_scores == rescored.service_scores
    assert "service final score, sourcegraph_full: 0.75" in run.report_md.read_text()
    # Graded again after the run, its new gradings and scores are not the ones its history
    # recorded: the audit names each (publishing it then takes --force, findings recorded).
    audited = await audit_main(outcome.run_id, client=disk.client, settings=disk.settings)
    assert audited.notes == ()
    assert sorted(f.where for f in audited.findings) == [
        "final_score.baseline.json",  # its bytes, and the score history recorded
        "final_score.baseline.json",
        "final_score.sourcegraph_full.json",
        "final_score.sourcegraph_full.json",
        "report.html",  # rewritten by the rescore: not the bytes the run published
        "report.md",
        "results.json",
        "tensor-broadcast-001/baseline/attempt-1",  # its eval.json, graded again
        "tensor-broadcast-001/sourcegraph_full/attempt-1",
    ]
    scores = [f for f in audited.findings if "score history" in f.message]
    assert len(scores) == 2 and all("`starter score`" in f.message for f in scores)


async def test_a_services_dataset_is_the_run_and_a_501_says_to_use_a_file(
    disk: Disk, service: ServiceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VALS_AUTH_KEY", KEY)  # listing datasets is a v1 call
    service.faults.datasets = {"validation": [{"id": "q1", "question": "6 x 7?"}]}
    service.set_answers({"q1": "42"})
    disk.rec.messages["q1/sourcegraph_full"] = "42"
    target = ServiceTarget(url=service.url, dataset="validation")
    outcome = await disk.run(suite="", agent="nop", service=target)
    run = RunPaths.for_run(disk.settings.runs_dir, outcome.run_id)
    result = RunResult.model_validate_json(run.results.read_text())
    assert [t.task_id for t in result.plan.tasks] == ["q1"]
    task_dir = Path(result.plan.tasks[0].task_dir)
    assert (task_dir / "instruction.md").read_text().startswith("6 x 7?")
    assert result.service_scores == {"baseline": 0.0, "sourcegraph_full": 1.0}

    service.faults.datasets = None  # the service does not list datasets: 501
    with pytest.raises(WorkflowFailureError) as refused:
        await disk.run(suite="", agent="nop", service=target)
    assert "give the tasks in a file with --dataset-file" in failure_message(refused.value)

    tasks_file = tmp_path / "validation.json"
    tasks_file.write_text(
        json.dumps(
            {
                "dataset_name": "validation",
                "tests": [{"id": "q1", "question": "6 x 7?"}, {"id": "q2", "question": "1 + 1?"}],
            }
        )
    )
    service.set_answers({"q1": "42", "q2": "2"})
    from_file = await disk.run(suite="", agent="nop", service=target, dataset_file=str(tasks_file))
    scored = RunResult.model_validate_json(
        RunPaths.for_run(disk.settings.runs_dir, from_file.run_id).results.read_text()
    )
    assert [t.task_id for t in scored.plan.tasks] == ["q1", "q2"]
    assert scored.service_scores == {"baseline": 0.0, "sourcegraph_full": 0.5}
