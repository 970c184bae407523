"""The real Claude Code CLI (npm) through durabench and the model gateway, offline.

A scripted Anthropic Messages API on loopback plays a session per lane: on the MCP lane
the model first calls the MCP server's search tool (a small JSON-RPC server, reached
through the gateway), then every lane runs one shell command that fixes the bug, then
ends. Both lanes must score 1.0 with the tokens the API sent, the MCP lane's transcript
must show the tool's answer, and no key may reach a container or a file. The CLI is
installed once for the module (the test homes share its npm cache).
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from durabench.models import RunRequest
from durabench.settings import Settings
from durabench.tasks import load_suite
from tests.integration.runs import finished_run
from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream

pytestmark = pytest.mark.docker

MODEL = "claude-haiku-4-5"
TASK = "tensor-gelu-001"
FULL = "sourcegraph_full"
FIX = "sed -i 's/0.44715/0.044715/' /workspace/tinytensor/activations.py"
FOUND = "activations.py:12: the cubic coefficient of GELU is 0.044715"
SEARCH = "mcp__sourcegraph__search"


@pytest.fixture(scope="module")
def npm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (CI installs it)")
    return tmp_path_factory.mktemp("agent-tools")


@pytest.fixture
def home(settings: Settings, npm_cache: Path) -> Iterator[Settings]:
    """The test's home, with the real task and the module's npm installs."""
    settings.home.mkdir(parents=True, exist_ok=True)
    (settings.home / "agent-tools").symlink_to(npm_cache)
    source = next(t for t in load_suite("pytorch") if t.task_id == TASK)
    shutil.copytree(source.task_dir, settings.home / "suites" / "real" / TASK)
    yield settings


def _tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results the conversation holds so far, as text."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(json.dumps(block.get("content")))
    return found


def _model(received: Received) -> Reply:
    """The scripted model: the MCP search if offered, then the fix, then the end.

    Claude Code defers MCP tools' schemas behind its ToolSearch tool, as a real model
    would see them: the script loads the search tool's schema first, then calls it.
    """
    body = received.body if isinstance(received.body, dict) else {}
    if "count_tokens" in received.path:
        return Reply(body={"input_tokens": 10})
    tools = {t.get("name") for t in body.get("tools") or []}
    model = str(body.get("model") or MODEL)
    if not tools:  # a side request (a title, a summary): a short answer
        return anthropic_stream(model, [{"type": "text", "text": "ok"}], input_tokens=7)
    steps: list[dict[str, Any]] = []
    if SEARCH in json.dumps(body):  # the MCP lane: its tool offered, or deferred
        if "ToolSearch" in tools:  # deferred: the model loads its schema first
            steps.append({"name": "ToolSearch", "input": {"query": f"select:{SEARCH}"}})
        steps.append({"name": SEARCH, "input": {"query": "gelu coefficient"}})
    steps.append({"name": "Bash", "input": {"command": FIX, "description": "Fix it"}})
    done = len(_tool_results(body))
    if done < len(steps):
        step = {"type": "tool_use", "id": f"toolu_{done}", **steps[done]}
        return anthropic_stream(model, [step], input_tokens=1000 + done, output_tokens=30)
    final = {"type": "text", "text": "Fixed the GELU coefficient."}
    return anthropic_stream(model, [final], input_tokens=1200, output_tokens=12, cache_read=64)


def _mcp(received: Received) -> Reply:
    """A small MCP server over HTTP: initialize, tools/list, tools/call."""
    if received.method != "POST":
        return Reply(status=405)
    body = received.body if isinstance(received.body, dict) else {}
    method, rid = body.get("method"), body.get("id")
    if rid is None:  # a notification
        return Reply(status=202)
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": body.get("params", {}).get("protocolVersion", "2025-03-26"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "search-stub", "version": "1.0"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"query": {"type": "string"}}}
        result = {
            "tools": [{"name": "search", "description": "Search code", "inputSchema": schema}]
        }
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": FOUND}]}
    else:
        result = {}
    return Reply(body={"jsonrpc": "2.0", "id": rid, "result": result})


def _api(received: Received) -> Reply:
    return _mcp(received) if received.path.startswith("/sg/") else _model(received)


async def test_real_claude_code_runs_a_whole_session_offline_through_the_gateway(
    client: Client,
    home: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    key, mcp_token = f"sk-ant-{uuid.uuid4().hex}", f"sgp_{uuid.uuid4().hex}"
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", mcp_token)
    with ModelUpstream(_api) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("SOURCEGRAPH_URL", api.url + "/sg")
        request = RunRequest(
            run_id=f"real-{uuid.uuid4().hex[:6]}",
            suite="real",
            agent="claude-code",
            model=MODEL,
            infra_retries=0,
        )
        paths, result = await finished_run(request, client, home)

    by_lane = {a.lane: a for a in result.attempts}
    assert {lane: (a.exit_class, a.reward) for lane, a in by_lane.items()} == {
        "baseline": ("completed", 1.0),
        FULL: ("completed", 1.0),
    }, [a.reason for a in result.attempts]
    sent = {k: api.sent.get(k, 0) for k in ("input", "output", "cache_read", "cache_write")}
    metered = {k: sum(getattr(a.tokens, k) for a in result.attempts) for k in sent}
    assert metered == sent  # the gateway's meter is exactly what the API sent
    models = [r for r in api.received if not r.path.startswith("/sg/")]
    assert {r.headers.get("x-api-key") for r in models} == {key}  # the real key, outside
    calls = [r.body for r in api.received if r.path.startswith("/sg/")]
    assert any(c.get("method") == "tools/call" for c in calls if isinstance(c, dict))
    transcript = (paths.attempt(TASK, FULL, 1) / "agent" / "stdout.txt").read_text()
    assert FOUND in transcript  # the MCP lane reached its server and read its answer
    events = [json.loads(line) for line in transcript.splitlines() if line.startswith("{")]
    init = next(e for e in events if e.get("subtype") == "init")
    assert [s.get("status") for s in init.get("mcp_servers", [])] == ["connected"]
    baseline = (paths.attempt(TASK, "baseline", 1) / "agent" / "stdout.txt").read_text()
    assert '"mcp_servers":[]' in baseline.replace(" ", "")

    files = [p.read_bytes() for p in paths.root.rglob("*") if p.is_file()]
    out, err = capfd.readouterr()
    for secret in (key, mcp_token):
        assert not [f for f in files if secret.encode() in f]
        assert secret not in out + err


async def test_real_claude_code_without_a_key_is_infra(
    client: Client, home: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no key on the worker the agent gets no placeholder: it cannot log in."""
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    request = RunRequest(
        run_id=f"real-{uuid.uuid4().hex[:6]}",
        suite="real",
        agent="claude-code",
        model=MODEL,
        infra_retries=1,
        infra_backoff_sec=0.1,
    )
    paths, result = await finished_run(request, client, home)
    assert len(result.attempts) == 4  # both lanes, retried once
    assert {a.exit_class for a in result.attempts} <= {"infra_auth", "infra_other"}
    assert set(result.excluded) == {TASK}
    assert "Nothing was measured" in paths.report_md.read_text()
    build_log = (paths.attempt(TASK, "baseline", 1) / "build.log").read_text()
    assert "@anthropic-ai/claude-code@" in build_log  # installed now, or cached earlier
    transcript = paths.attempt(TASK, "baseline", 1) / "agent" / "stdout.txt"
    init = json.loads(transcript.read_text().splitlines()[0])
    assert init["type"] == "system" and init["mcp_servers"] == []  # the real CLI started
