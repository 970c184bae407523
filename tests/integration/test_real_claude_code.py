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
import uuid
from typing import Any

import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from tests.integration.real_sessions import FIX, FULL, TASK, assert_whole_session, real_session
from tests.integration.runs import finished_run
from tests.model_upstream import Received, Reply, anthropic_stream

pytestmark = pytest.mark.docker

MODEL = "claude-haiku-4-5"
SEARCH = "mcp__sourcegraph__search"


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


async def test_real_claude_code_runs_a_whole_session_offline_through_the_gateway(
    client: Client,
    home: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN", raising=False)
    session = await real_session(
        "claude-code",
        MODEL,
        _model,
        ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""),
        key=f"sk-ant-{uuid.uuid4().hex}",
        client=client,
        home=home,
        monkeypatch=monkeypatch,
    )
    assert_whole_session(session, capfd)
    models = session.model_requests()
    assert {r.headers.get("x-api-key") for r in models} == {session.key}  # outside only
    init = next(e for e in session.transcript(FULL) if e.get("subtype") == "init")
    assert [s.get("status") for s in init.get("mcp_servers", [])] == ["connected"]
    init = next(e for e in session.transcript("baseline") if e.get("subtype") == "init")
    assert init["mcp_servers"] == []


async def test_real_claude_code_without_a_key_is_infra(
    client: Client, home: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no key on the worker the agent gets no placeholder: it cannot log in."""
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    request = RunRequest(
        run_id=f"real-{uuid.uuid4().hex[:6]}",
        suite="real",
        agent=AgentSpec(name="claude-code", model=MODEL),
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
