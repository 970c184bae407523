"""Two hosts with separate homes share only Temporal and an object store; one report.

Each worker is its own process with its own ``DURABENCH_HOME`` and host id, so what it
collects lands on its own disk and in the store (a real S3 server on loopback, moto's).
The starter has a third home: every attempt it reports came to it through the store.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from temporalio.client import Client

from durabench.errors import ConfigError
from durabench.models import RunRequest, RunResult
from durabench.results.store import ObjectStore
from durabench.settings.paths import TRAJECTORY, RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from starter.export import export_text
from starter.report import report_text
from starter.run import main as run_main
from tests.integration.runs import approved_detached, replay_request, worker_process
from tests.s3_server import new_bucket, s3_env, s3_server

pytestmark = pytest.mark.docker

SECRET = "s3-secret-1f9c2e7d"  # the store's key: moto takes any; it must show up nowhere

SESSION = [
    {"type": "system", "subtype": "init", "model": "m-20250101"},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Left a note."},
]


async def _histories(client: Client, run_id: str) -> list[str]:
    """The JSON history of every workflow of the run: the run, its pairs, its attempts."""
    query = f"WorkflowId STARTS_WITH 'run/{run_id}'"
    return [
        (await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()).to_json()
        async for wf in client.list_workflows(query)
    ]


def _suite(tmp_path: Path, homes: list[Path]) -> Path:
    """Two bundled tasks as suite ``two``, seen in every home; the directory that holds it."""
    shared = tmp_path / "tasks"
    for task in load_suite("pytorch")[:2]:
        shutil.copytree(task.task_dir, shared / "two" / task.task_id)
    for home in homes:
        (home / "suites").mkdir(parents=True)
        (home / "suites" / "two").symlink_to(shared / "two")
    return shared


def _request(tmp_path: Path) -> RunRequest:
    """Two tasks, both lanes, by the replay agent leaving a note."""
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in SESSION))
    (tmp_path / "notes").write_text("notes\n")
    case = {"transcript": "t.jsonl", "duration_sec": 3, "files": {"n.md": "notes"}}
    (tmp_path / "plan.json").write_text(json.dumps({"cases": [case]}))
    request = replay_request("store", "two", tmp_path / "plan.json", parallel=2)
    agent = request.agent.model_copy(update={"model": "m"})  # the model the session says it is
    return request.model_copy(update={"agent": agent})


async def test_attempts_of_two_hosts_with_separate_homes_report_from_the_store(
    client: Client, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    homes = {host: tmp_path / host for host in ("host-a", "host-b")}
    starter_home = settings.home
    shared = _suite(tmp_path, [starter_home, *homes.values()])
    request = _request(tmp_path)
    with s3_server() as endpoint:
        aws = s3_env(monkeypatch, endpoint) | {"AWS_SECRET_ACCESS_KEY": SECRET}
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
        bucket = new_bucket()
        url = f"s3://{bucket}/results"
        store = ObjectStore(url).fs
        store.mkdir(bucket)
        here = settings.model_copy(update={"results_url": url})
        workers = [
            worker_process(
                here.model_copy(update={"home": home}),
                tmp_path / f"{host}.log",
                **aws,
                DURABENCH_RESULTS_URL=url,
                DURABENCH_HOST_ID=host,
                DURABENCH_MAX_SANDBOXES="1",
                DURABENCH_TASK_ROOTS=str(shared),
            )
            for host, home in homes.items()
        ]
        try:
            handle = await asyncio.wait_for(approved_detached(request, client, here), 60)
            outcome = await asyncio.wait_for(handle.result(), 120)
        finally:
            for proc in workers:
                proc.terminate()
                proc.wait(timeout=30)
        assert outcome.status == "completed"
        local = RunPaths.for_run(starter_home / "runs", request.run_id)
        assert local.attempt_results() == []  # nothing here yet but what the store gives

        result = RunResult.model_validate_json(report_text(here, request.run_id, "json", None))
        rows = export_text(here, request.run_id, "csv", "attempt").splitlines()
        kept = store.ls(f"{bucket}/results/{request.run_id}")
        stored = [store.cat_file(key) for key in store.find(f"{bucket}/results/{request.run_id}")]
        histories = await _histories(client, request.run_id)

    # Every attempt of both hosts is in the report, as the reader in the third home sees it.
    assert len(result.attempts) == 4
    assert {a.exit_class for a in result.attempts} == {"completed"}
    assert {a.hosts for a in result.attempts} == {("host-a",), ("host-b",)}
    assert len(rows) == 1 + 4
    # What each host collected came through the store, not only each result.json.
    for a in result.attempts:
        attempt = local.attempt(a.task_id, a.lane, a.attempt)
        assert (attempt / "result.json").is_file()
        assert (attempt / TRAJECTORY).is_file(), sorted(attempt.rglob("*"))
    # The workers wrote the report to the store too.
    assert {Path(k).name for k in kept} >= {"plan.json", "run.json", "results.json", "report.md"}
    # The store's key reached botocore only: no history, log, home or stored file holds it.
    assert len(histories) >= 1 + 2 + 4 and not any(SECRET in h for h in histories)
    on_disk = [f.read_bytes() for f in tmp_path.rglob("*") if f.is_file()]
    on_disk += [f.read_bytes() for f in starter_home.rglob("*") if f.is_file()]
    assert not any(SECRET.encode() in blob for blob in on_disk + stored)


async def test_a_missing_bucket_stops_the_starter_and_the_worker_before_anything_runs(
    client: Client, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _request(tmp_path)
    with s3_server() as endpoint:
        aws = s3_env(monkeypatch, endpoint)
        url = f"s3://{new_bucket()}/results"  # never made
        here = settings.model_copy(update={"results_url": url})

        with pytest.raises(ConfigError, match="Create the bucket"):
            await run_main(request, detach=True, client=client, settings=here)
        log = tmp_path / "worker.log"
        worker = worker_process(here, log, **aws, DURABENCH_RESULTS_URL=url)
        exit_code = worker.wait(timeout=60)

    assert [w async for w in client.list_workflows(f"WorkflowId = 'run/{request.run_id}'")] == []
    assert exit_code != 0
    assert "Create the bucket" in log.read_text()
