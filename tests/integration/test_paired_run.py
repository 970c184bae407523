"""The bundled suite end to end: real Temporal, real Docker, the oracle and nop agents."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import docker
import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.results.viewer import ViewerSite
from durabench.settings.paths import TRAJECTORY, RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from starter.audit import audit_main
from starter.run import main as run_main
from starter.status import status_main
from workflows import attempt_workflow_id, pair_workflow_id, run_workflow_id

pytestmark = pytest.mark.docker

SECRET = f"sgp_{uuid.uuid4().hex}"


def _request(suite: str = "pytorch", agent: str = "oracle") -> RunRequest:
    return RunRequest(
        run_id=f"it-{uuid.uuid4().hex[:8]}", suite=suite, agent=AgentSpec(name=agent), parallel=4
    )


def _leftover_containers(run_id: str) -> list[str]:
    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": f"durabench.run={run_id}"})
        return [c.name for c in found]
    finally:
        client.close()


async def _histories(client: Client, result: RunResult) -> str:
    run_id = result.plan.request.run_id
    ids = [run_workflow_id(run_id)]
    for task in result.plan.tasks:
        ids.append(pair_workflow_id(run_id, task.task_id))
        ids += [attempt_workflow_id(run_id, task.task_id, lane, 1) for lane in result.plan.lanes]
    texts = [(await client.get_workflow_handle(i).fetch_history()).to_json() for i in ids]
    return "\n".join(texts)


async def test_oracle_scores_every_pair_one_and_keeps_secrets_out(
    client: Client,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SOURCEGRAPH_URL", "https://sourcegraph.invalid")
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", SECRET)
    request = _request()
    outcome = await run_main(request, yes=True, client=client, settings=settings)

    assert outcome is not None and outcome.status == "completed"
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    result = RunResult.model_validate_json(paths.results.read_text())
    tasks = load_suite("pytorch")
    assert len(result.attempts) == 2 * len(tasks)
    for attempt in result.attempts:
        assert (attempt.exit_class, attempt.reward) == ("completed", 1.0), attempt
        assert attempt.files_changed >= 1
        patch = paths.attempt(attempt.task_id, attempt.lane, 1) / "submission.patch"
        assert "+++ b/tinytensor/" in patch.read_text()
        trajectory = (paths.attempt(attempt.task_id, attempt.lane, 1) / TRAJECTORY).read_text()
        assert "/solution/solve.sh" in trajectory and "[exit code 0]" in trajectory
    assert all(s.mean_reward == 1.0 for s in outcome.lanes)
    assert paths.report_md.is_file() and paths.run.is_file()
    assert _leftover_containers(request.run_id) == []
    assert await status_main(request.run_id, client=client, settings=settings) == "completed"

    by_lane = {(a.task_id, a.lane): a for a in result.attempts}
    for task in tasks:
        full_dir = paths.attempt(task.task_id, "sourcegraph_full", 1) / "durabench"
        base_dir = paths.attempt(task.task_id, "baseline", 1) / "durabench"
        mcp_text = (Path(task.task_dir) / "instruction_mcp.md").read_text()
        assert (full_dir / "instruction.md").read_text() == mcp_text
        assert (full_dir / "mcp.json").is_file()
        assert (base_dir / "instruction.md").read_text() != mcp_text
        assert not (base_dir / "mcp.json").exists()
        assert by_lane[(task.task_id, "sourcegraph_full")].mcp_config
        assert not by_lane[(task.task_id, "baseline")].mcp_config
    assert by_lane[("tensor-broadcast-001", "sourcegraph_full")].dockerfile == "Dockerfile.sg_only"
    assert by_lane[("tensor-broadcast-001", "baseline")].dockerfile == "Dockerfile"

    files = [p for p in paths.root.rglob("*") if p.is_file()]
    assert not [p for p in files if SECRET.encode() in p.read_bytes()]
    assert SECRET not in await _histories(client, result)
    task_id = tasks[0].task_id
    viewed = ViewerSite(settings.runs_dir).answer(
        f"/runs/{request.run_id}/tasks/{task_id}/baseline/attempt-1/"
    )
    assert viewed.status == 200 and b"solve.sh" in viewed.body  # the oracle's step, viewed
    audited = await audit_main(request.run_id, client=client, settings=settings)
    assert (audited.lines(), audited.notes) == ((), ())
    out, err = capfd.readouterr()
    assert SECRET not in out + err


async def test_nop_agent_leaves_every_task_unsolved(client: Client, settings: Settings) -> None:
    request = _request(agent="nop")
    outcome = await run_main(request, yes=True, client=client, settings=settings)
    assert outcome is not None and outcome.status == "completed"
    result = RunResult.model_validate_json(
        RunPaths.for_run(settings.runs_dir, request.run_id).results.read_text()
    )
    assert len(result.attempts) == 2 * len(result.plan.tasks)
    for attempt in result.attempts:
        assert attempt.exit_class == "model_no_code"
        assert attempt.reward is not None and attempt.reward < 1.0, attempt
        assert attempt.files_changed == 0
    assert _leftover_containers(request.run_id) == []


async def test_image_build_failure_is_an_infra_error_and_the_run_goes_on(
    client: Client, settings: Settings
) -> None:
    good = load_suite("pytorch")[1]
    suite = settings.home / "suites" / "broken"
    shutil.copytree(good.task_dir, suite / "a-good")
    bad = suite / "b-bad"
    shutil.copytree(good.task_dir, bad)
    (bad / "task.toml").write_text((bad / "task.toml").read_text().replace(good.task_id, "bad-1"))
    dockerfile = bad / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo no-such-step && exit 3\n")

    request = _request(suite="broken").model_copy(
        update={"infra_retries": 1, "infra_backoff_sec": 0.1}
    )
    outcome = await run_main(request, yes=True, client=client, settings=settings)
    assert outcome is not None and outcome.status == "completed"
    paths = RunPaths.for_run(settings.runs_dir, request.run_id)
    result = RunResult.model_validate_json(paths.results.read_text())
    by_attempt = {(a.task_id, a.lane, a.attempt): a for a in result.attempts}
    for lane in result.plan.lanes:
        for attempt in (1, 2):  # retried once as a new attempt, then given up
            failed = by_attempt[("bad-1", lane, attempt)]
            assert failed.exit_class == "infra_other" and failed.reward is None
            assert "ImageBuildError" in failed.reason
            log = paths.attempt("bad-1", lane, attempt) / "build.log"
            assert "no-such-step" in log.read_text() and str(log) in failed.reason
        assert by_attempt[(good.task_id, lane, 1)].reward == 1.0
    assert set(result.excluded) == {"bad-1"}
    assert _leftover_containers(request.run_id) == []
    audited = await audit_main(request.run_id, client=client, settings=settings)
    assert (audited.lines(), audited.notes) == ((), ())
