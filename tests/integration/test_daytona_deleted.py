"""A Daytona sandbox deleted under its running attempt: infrastructure, and run again."""

from __future__ import annotations

import asyncio
import json
import shutil
import uuid
from pathlib import Path

import docker
import docker.errors
import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.runs import finished_run

pytestmark = pytest.mark.docker
pytest.importorskip("daytona")

SESSION = [
    {"type": "system", "subtype": "init", "model": "m-20250101"},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed it."},
]


def _started(container: str) -> bool:
    client = docker.from_env()
    try:
        c = client.containers.get(container)
        return c.exec_run(["test", "-e", "/logs/steps/step-0.started"]).exit_code == 0
    except docker.errors.APIError:
        return False
    finally:
        client.close()


async def _delete_baseline_when_running(standin: object) -> str:
    """Delete the baseline sandbox once its session runs, as the service would."""
    while True:
        for name, container in standin.boxes().items():  # type: ignore[attr-defined]
            if "-baseline-" in name and await asyncio.to_thread(_started, container):
                standin.delete_under(name)  # type: ignore[attr-defined]
                return name
        await asyncio.sleep(0.3)


async def test_a_sandbox_deleted_mid_session_is_infra_and_rerun(
    client: Client,
    settings: Settings,
    standin: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("DURABENCH_DAYTONA_BACKOFF_SEC", "0.05")
    source = load_suite("pytorch")[1]
    shutil.copytree(source.task_dir, settings.home / "suites" / "del" / source.task_id)
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SESSION))
    (tmp_path / "notes").write_text("notes\n")
    case = {"transcript": "t.jsonl", "duration_sec": 8, "files": {"n.md": "notes"}}
    (tmp_path / "plan.json").write_text(json.dumps({"cases": [case]}))
    request = RunRequest(
        run_id=f"dtdel-{uuid.uuid4().hex[:6]}",
        suite="del",
        agent=AgentSpec(name="replay", model="m", options={"plan": str(tmp_path / "plan.json")}),
        infra_retries=1,
        infra_backoff_sec=0.1,
    )
    creates = standin.creates  # type: ignore[attr-defined]
    deleter = asyncio.create_task(_delete_baseline_when_running(standin))
    on_daytona = settings.model_copy(update={"sandbox": "daytona"})
    _, result = await finished_run(request, client, on_daytona)
    assert deleter.done()

    by = {(a.lane, a.attempt): a for a in result.attempts}
    assert by[("baseline", 1)].exit_class.startswith("infra_"), by[("baseline", 1)]
    assert by[("baseline", 2)].exit_class == "completed", by[("baseline", 2)]
    assert standin.creates - creates == 3  # type: ignore[attr-defined]
    assert standin.containers() == []  # type: ignore[attr-defined]
