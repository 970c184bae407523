"""The MCP lane is measured only when MCP worked, through the real pipeline.

The replay agent plays Claude Code sessions whose ``init`` event reports the MCP servers:
on one task the MCP lane's server failed, and the recorded gateway ledger shows its MCP
requests unanswered: infra, retried, then the pair is excluded, and the report says why.
On the other the baseline's report shows an MCP server: that is the agent's word only,
quoted in the reason, never a cause to exclude.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from durabench.settings.values import Settings
from tests.integration.runs import finished_run, gelu_task, replay_request

pytestmark = pytest.mark.docker

MODEL = "claude-haiku-4-5"
FULL = "sourcegraph_full"


def _session(servers: list[dict[str, str]]) -> list[dict[str, Any]]:
    init = {"type": "system", "subtype": "init", "model": MODEL, "mcp_servers": servers}
    done = {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed it."}
    return [init, done]


TRANSCRIPTS = {
    "alone": _session([]),
    "mcp-ok": _session([{"name": "sourcegraph", "status": "connected"}]),
    "mcp-failed": _session([{"name": "sourcegraph", "status": "failed"}]),
}
NOTES = {"notes.md": "notes"}
_MODEL_ANSWER = {
    "at": 1.0,
    "provider": "anthropic",
    "path": "/v1/messages",
    "status": 200,
    "asked_model": MODEL,
    "usage": {"model": MODEL, "input": 10, "output": 5},
}
_MCP_REFUSED = {"at": 2.0, "provider": "mcp", "path": "/.api/mcp/v1", "status": 502}
LEDGER = [_MODEL_ANSWER, _MCP_REFUSED, _MCP_REFUSED]
"""The gateway's record of the m1 MCP lane: its model answered, its MCP server never did."""
CASES = [
    {"task": "m1", "lane": "baseline", "transcript": "alone", "files": NOTES},
    {"task": "m1", "lane": FULL, "transcript": "mcp-failed", "files": NOTES, "ledger": "l"},
    {"task": "m2", "lane": "baseline", "transcript": "mcp-ok", "files": NOTES},
    {"task": "m2", "lane": FULL, "transcript": "mcp-ok", "files": NOTES},
]


def _write_plan(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, events in TRANSCRIPTS.items():
        (root / name).write_text("".join(json.dumps(e) + "\n" for e in events))
    (root / "notes").write_text("notes the agent left\n")
    (root / "l").write_text("".join(json.dumps(e) + "\n" for e in LEDGER))
    (root / "plan.json").write_text(json.dumps({"cases": CASES}))
    return root / "plan.json"


async def test_a_dead_mcp_server_on_record_excludes_the_pair_and_a_report_alone_does_not(
    client: Client, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCEGRAPH_URL", "https://sourcegraph.invalid")
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", f"sgp_{uuid.uuid4().hex}")
    for task_id in ("m1", "m2"):
        gelu_task(settings.home, "mcp", task_id)
    request = replay_request("mcp", "mcp", _write_plan(tmp_path / "replay"), parallel=2)
    paths, result = await finished_run(request, client, settings)
    got = {(a.task_id, a.lane, a.attempt): a.exit_class for a in result.attempts}
    assert got == {
        ("m1", "baseline", 1): "completed",
        ("m1", FULL, 1): "infra_other",  # the server failed: retried ...
        ("m1", FULL, 2): "infra_other",  # ... and failed again
        ("m2", "baseline", 1): "completed",  # the baseline's report shows MCP: quoted
        ("m2", FULL, 1): "completed",
    }
    assert set(result.excluded) == {"m1"}
    assert "MCP NOT WORKING" in result.excluded["m1"] and "none answered" in result.excluded["m1"]
    by_key = {(a.task_id, a.lane, a.attempt): a for a in result.attempts}
    assert "MCP ON BASELINE" in by_key[("m2", "baseline", 1)].reason

    md = paths.report_md.read_text()
    excluded = md.split("## Excluded pairs", 1)[1]
    assert "- m1: sourcegraph_full ended infra_other on attempt 2: MCP NOT WORKING" in excluded
    assert "- m2:" not in excluded
