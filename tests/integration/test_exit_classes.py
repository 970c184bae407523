"""Every exit class through the real pipeline: Temporal, Docker, verifier, classifier.

The replay agent plays recorded sessions (written here, not copied from anywhere) inside
the task containers, so rate limits, usage caps, timeouts and crashes happen for real as
far as durabench can tell. An infra class needs what the model API answered: each API
failure comes with the gateway ledger of it, which the worker reads on the host. A
session that only claims a cap (``fake-cap``, no ledger) stays the model's.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from durabench.classify import load_table
from durabench.models.results import RunResult
from durabench.settings.paths import TRAJECTORY
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from starter.report import report_text
from tests.integration.runs import finished_run, replay_request

pytestmark = pytest.mark.docker

MODEL = "claude-haiku-4-5"
SERVED = "claude-haiku-4-5-20251001"
SECRET = f"sgp_{uuid.uuid4().hex}"


def _session(*events: dict[str, Any], model: str = SERVED) -> list[dict[str, Any]]:
    return [{"type": "system", "subtype": "init", "model": model}, *events]


def _api_error(text: str) -> dict[str, Any]:
    message = {"model": "<synthetic>", "content": [{"type": "text", "text": text}]}
    return {"type": "assistant", "message": message, "is_api_error_message": True}


def _result(text: str, is_error: bool = False) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": is_error, "result": text}


TRANSCRIPTS = {
    "done": _session(_result("Fixed the bug; all tests pass.")),
    "context": _session(_api_error("Prompt is too long")),
    "output-cap": _session(
        _api_error("API Error: the response exceeded the 32000 output token maximum")
    ),
    "auth": _session(_result("Invalid API key · Please run /login", is_error=True)),
    "429": _session(_result("Request rejected (429) · try again later", is_error=True)),
    "swapped": _session(_result("Done."), model="claude-opus-4-7"),
    "usage-cap": _session(_api_error("You've hit your limit · resets 5:30pm (UTC)")),
    "fake-cap": _session(_result("You've hit your limit · resets Dec 3 at 4pm", is_error=True)),
}


def _answer(status: int, model: str = "", error: str = "", **fields: Any) -> dict[str, Any]:
    usage = {"model": model, "output": 5 if model else 0, "error": error}
    entry = {"at": 1.0, "provider": "anthropic", "path": "/v1/messages", "status": status}
    return {**entry, "asked_model": MODEL, "usage": usage, **fields}


LEDGERS = {
    "auth": [_answer(401, error="authentication_error")],
    "429": [_answer(200, SERVED), _answer(429, error="rate_limit_error")],
    "swapped": [_answer(200, "claude-opus-4-7")],
    "usage-cap": [_answer(200, SERVED), _answer(429, error="rate_limit_error")],
}
"""What the model API answered each API-failure session, as the gateway records it."""

FULL = "sourcegraph_full"
CASES: list[dict[str, Any]] = [
    {
        "task": "c1",
        "lane": "baseline",
        "transcript": "done",
        "files": {"notes.md": "notes"},
        "echo_env": ["SOURCEGRAPH_ACCESS_TOKEN"],
    },
    {"task": "c1", "lane": FULL, "transcript": "done"},
    {"task": "c2", "lane": "baseline", "transcript": "done", "hang": True},
    {"task": "c2", "lane": FULL, "transcript": "context", "exit_code": 1},
    {
        "task": "c3",
        "lane": "baseline",
        "transcript": "done",
        "files": {"tinytensor/activations.py": "broken"},
    },
    {"task": "c3", "lane": FULL, "transcript": "fake-cap", "exit_code": 1},
    {"task": "c4", "lane": "baseline", "transcript": "output-cap", "exit_code": 1},
    {"task": "c4", "lane": FULL, "transcript": "auth", "exit_code": 1},
    {"task": "c5", "lane": "baseline", "attempt": 1, "transcript": "429", "exit_code": 1},
    {"task": "c5", "lane": FULL, "attempt": 1, "transcript": "swapped"},
    {"task": "c5", "transcript": "done", "files": {"notes.md": "notes"}},
    {"task": "c6", "lane": "baseline", "transcript": "usage-cap", "exit_code": 1},
    {
        "task": "c6",
        "lane": FULL,
        "transcript": "done",
        "files": {"notes.md": "notes"},
        "echo_env": ["SOURCEGRAPH_ACCESS_TOKEN"],
    },
]


def _write_plan(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, events in TRANSCRIPTS.items():
        (root / name).write_text("".join(json.dumps(e) + "\n" for e in events))
    (root / "notes").write_text("notes the agent left\n")
    (root / "broken").write_text("def gelu(x:\n")
    for name, answers in LEDGERS.items():
        (root / f"{name}.ledger").write_text("".join(json.dumps(a) + "\n" for a in answers))
    cases = [
        {**c, "ledger": f"{c['transcript']}.ledger"} if c["transcript"] in LEDGERS else c
        for c in CASES
    ]
    (root / "plan.json").write_text(json.dumps({"cases": cases}, indent=1))
    return root / "plan.json"


def _write_suite(home: Path) -> None:
    source = next(t for t in load_suite("pytorch") if t.task_id == "tensor-gelu-001")
    for n in range(1, 7):
        task = home / "suites" / "classes" / f"c{n}"
        shutil.copytree(source.task_dir, task)
        toml = (task / "task.toml").read_text().replace(source.task_id, f"c{n}")
        build = 'build_command = "python3 -m py_compile tinytensor/*.py"'
        toml = toml.replace(
            'command = "bash /tests/test.sh"', f'command = "bash /tests/test.sh"\n{build}'
        )
        (task / "task.toml").write_text(toml)


async def test_every_exit_class_with_retries_and_exclusions(
    client: Client, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCEGRAPH_URL", "https://sourcegraph.invalid")
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", SECRET)
    settings = settings.model_copy(update={"timeout_multiplier": 0.02})  # 300 s -> 6 s
    _write_suite(settings.home)
    request = replay_request("classes", "classes", _write_plan(tmp_path / "replay"), parallel=6)
    paths, result = await finished_run(request, client, settings)
    got = {(a.task_id, a.lane, a.attempt): a.exit_class for a in result.attempts}
    assert got == {
        ("c1", "baseline", 1): "completed",
        ("c1", FULL, 1): "model_no_code",
        ("c2", "baseline", 1): "model_timeout",  # not retried
        ("c2", FULL, 1): "model_context_exhausted",
        ("c3", "baseline", 1): "model_build_failure",
        ("c3", FULL, 1): "model_agent_error",  # a cap it only claims: no retry, no exclusion
        ("c4", "baseline", 1): "model_output_cap",
        ("c4", FULL, 1): "infra_auth",
        ("c4", FULL, 2): "infra_auth",
        ("c5", "baseline", 1): "infra_rate_limit",
        ("c5", "baseline", 2): "completed",  # the infra arm was retried; the pair completes
        ("c5", FULL, 1): "infra_other",
        ("c5", FULL, 2): "completed",
        ("c6", "baseline", 1): "infra_usage_cap",
        ("c6", "baseline", 2): "infra_usage_cap",
        ("c6", FULL, 1): "completed",
    }
    assert set(result.excluded) == {"c4", "c6"}
    by_key = {(a.task_id, a.lane, a.attempt): a for a in result.attempts}
    assert "MODEL MISMATCH" in by_key[("c5", FULL, 1)].reason
    assert "no such answer from the model API" in by_key[("c3", FULL, 1)].reason
    assert by_key[("c5", FULL, 1)].served_model == "claude-opus-4-7"
    assert by_key[("c1", "baseline", 1)].served_model == SERVED
    assert by_key[("c1", "baseline", 1)].signals.claims_complete
    assert by_key[("c1", FULL, 1)].signals.false_completion
    assert all(a.classifier_version == load_table().version for a in result.attempts)
    assert result.plan.mcp_env_missing == ()

    # An HTTP MCP server's token stays on the worker: no lane's sandbox gets it (the
    # replay agent has no network and no gateway); nothing kept on disk holds it.
    full_out = paths.attempt("c6", FULL, 1) / "agent" / "stdout.txt"
    assert "SOURCEGRAPH_ACCESS_TOKEN=\n" in full_out.read_text()
    base_out = paths.attempt("c1", "baseline", 1) / "agent" / "stdout.txt"
    assert "SOURCEGRAPH_ACCESS_TOKEN=\n" in base_out.read_text()  # baseline never gets it
    assert not [
        p for p in paths.root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()
    ]

    # The reports of a mixed run show every part: daggers, comparison, exclusions, totals.
    md = report_text(settings, request.run_id, "md", None)
    assert "†1" in md and "model_timeout after" in md
    assert "## Paired comparison" in md and "McNemar exact p" in md
    assert "dropped: 2 with an excluded arm" in md
    assert "c6 / baseline / attempt 2: infra_usage_cap" in md
    assert "⚠ claims_complete, false_completion" in md  # c1 MCP lane: claims done, no file
    html = paths.report_html.read_text()
    assert 'id="rewards-chart"' in html and 'id="delta-chart"' in html

    # Each attempt's transcript is kept as an ATIF trajectory, linked from the report.
    trajectory = json.loads((paths.attempt("c1", "baseline", 1) / TRAJECTORY).read_text())
    assert trajectory["schema_version"] == "ATIF-v1.4"
    assert trajectory["steps"][0]["source"] == "user"  # the instruction opens it
    assert trajectory["agent"]["model_name"] == SERVED
    assert f'<a href="tasks/c1/baseline/attempt-1/{TRAJECTORY}">trajectory</a>' in html
    scored = RunResult.model_validate_json(report_text(settings, request.run_id, "json", None))
    assert scored.scorecard is not None and scored.scorecard.comparison is not None
