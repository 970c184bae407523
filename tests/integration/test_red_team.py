"""Red team: tasks whose "solution" attacks the harness, beside an honest control.

One paired run on real Docker, network none, the oracle run as the unprivileged ``agent``
user (as real agents run). Each attack task's solve.sh tries to raise its score or take
the worker down: a 64 GiB sparse file where the worker collects, a flood of files, a
flood on stdout, a process left behind to fix the bug (or copy the hidden tests) while the
verifier runs, forged step markers, a rewritten transcript. The control scores 1.0; no
attack raises its own score; what the worker kept stays under its limits and what it left
out is said; the run finishes and leaves no container or volume behind.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import docker
import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.results import AttemptResult
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.runs import containers_of, finished_run

pytestmark = pytest.mark.docker

FIX = "sed -i 's/0.44715/0.044715/' /workspace/tinytensor/activations.py"
"""The honest fix of the gelu task."""

ATTACKS = {
    "control": f"{FIX}\n",
    "sparse": (
        "truncate -s 64G /workspace/sparse.bin /logs/agent/sparse.log\n"
        "echo 'print(1)' > /workspace/after_the_sparse_file.py\n"
    ),
    "flood": (
        "mkdir -p /logs/agent/flood /workspace/flood\n"
        "for i in $(seq 1 700); do echo $i > /logs/agent/flood/$i; done\n"
        "head -c 40000000 /dev/zero | tr '\\0' a\n"  # 40 MB on stdout
    ),
    "linger": (
        # Left running, it would fix the bug once the hidden tests arrive (verification).
        "setsid sh -c 'while [ ! -e /tests/test.sh ]; do sleep 0.05; done; "
        f"{FIX}; cp -r /tests /workspace/stolen-tests' >/dev/null 2>&1 < /dev/null &\n"
        "nohup sh -c 'sleep 1; while :; do sleep 0.05; done' >/dev/null 2>&1 &\n"
    ),
    "thread": (
        # A process whose main thread exits while another thread waits for the tests.
        'setsid python3 -c "import ctypes, os, shutil, threading, time\n'
        "def later():\n"
        "    while not os.path.exists('/tests/test.sh'): time.sleep(0.05)\n"
        f'    os.system(\\"{FIX}\\")\n'
        "threading.Thread(target=later).start()\n"
        'ctypes.CDLL(None).pthread_exit(None)" >/dev/null 2>&1 < /dev/null &\n'
        "sleep 1\n"
    ),
    "fill": "head -c 80000000 /dev/zero > /logs/agent/filler; exit 1\n",
    "forger": (
        "echo '0 1 300' > /logs/steps/step-0.done 2>/dev/null || echo 'markers: denied'\n"
        'echo \'{"type":"result","model":"forged"}\' > /logs/steps/stdout.txt 2>/dev/null'
        " || echo 'transcript: denied'\n"
        "echo 'forged transcript' > /logs/agent/stdout.txt\n"
        "echo '0 1 300' > /logs/agent/step-0.done\n"
        "exit 3\n"
    ),
}


def _suite(home: Path) -> str:
    source = next(t for t in load_suite("pytorch") if t.task_id == "tensor-gelu-001")
    for name, script in ATTACKS.items():
        task = home / "suites" / "redteam" / f"rt-{name}"
        shutil.copytree(source.task_dir, task)
        toml = task / "task.toml"
        toml.write_text(toml.read_text().replace(source.task_id, f"rt-{name}"))
        (task / "solution" / "solve.sh").write_text(f"#!/bin/bash\n{script}")
    return "redteam"


def _volumes() -> set[str]:
    """Volumes no container uses: others' runs on a shared daemon hold theirs in use."""
    client = docker.from_env()
    try:
        return {v.name for v in client.volumes.list(filters={"dangling": True})}
    finally:
        client.close()


async def test_attacks_do_not_raise_their_scores_or_break_the_worker(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCEGRAPH_URL", "https://sourcegraph.invalid")
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", "sgp_red_team_unused")
    limits = {
        "collect_files": 500,
        "collect_file_mb": 8,
        "collect_total_mb": 32,
        "sandbox_logs_mb": 64,
    }
    settings = settings.model_copy(update=limits)
    volumes_before = _volumes()
    request = RunRequest(
        run_id=f"rt-{uuid.uuid4().hex[:8]}",
        suite=_suite(settings.home),
        agent=AgentSpec(name="oracle", options={"user": "agent"}),
        parallel=3,
    )
    paths, result = await finished_run(request, client, settings)

    by_task: dict[str, list[AttemptResult]] = {}
    for attempt in result.attempts:
        by_task.setdefault(attempt.task_id, []).append(attempt)
        assert attempt.attempt == 1, attempt  # every attack is the task's own failure
    assert {a.reward for a in by_task["rt-control"]} == {1.0}
    for name in ATTACKS.keys() - {"control"}:
        assert {a.reward for a in by_task[f"rt-{name}"]} == {0.0}, by_task[f"rt-{name}"]

    for attempt in by_task["rt-sparse"]:
        assert any("sparse.log: 64.0 GiB" in note for note in attempt.left_out), attempt
        assert any("sparse.bin: 64.0 GiB" in note for note in attempt.left_out), attempt
    for attempt in by_task["rt-flood"]:
        assert any("more than 500 files" in note for note in attempt.left_out), attempt
        assert any("stdout.txt: 38.1 MiB" in note for note in attempt.left_out), attempt
    for attempt in by_task["rt-forger"]:
        assert attempt.agent_exit_code == 3, attempt  # its own end, not the forged one
        kept = paths.attempt("rt-forger", attempt.lane, 1) / "agent"
        said = (kept / "stdout.txt").read_text()
        assert "markers: denied" in said and "transcript: denied" in said
        assert "forged" not in said
        assert (kept / "step-0.done").read_text().split()[0] == "3"
    for attempt in by_task["rt-linger"]:
        workspace_patch = paths.attempt("rt-linger", attempt.lane, 1) / "submission.patch"
        assert "stolen-tests" not in workspace_patch.read_text()

    for attempt_dir in paths.root.glob("tasks/*/*/attempt-*"):
        kept_bytes = sum(f.stat().st_size for f in attempt_dir.rglob("*") if f.is_file())
        assert kept_bytes < 64 << 20, attempt_dir  # collect 32 MiB + workspace snapshots
        assert not any(f.is_symlink() for f in attempt_dir.rglob("*")), attempt_dir

    assert containers_of(request.run_id) == []
    assert _volumes() <= volumes_before  # every /logs volume went with its container
