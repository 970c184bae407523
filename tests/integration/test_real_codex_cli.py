"""The real Codex CLI (npm) through durabench and the model gateway, offline.

A scripted OpenAI Responses API on loopback plays a session per lane: on the MCP lane
the model first calls the MCP server's search tool (Codex offers an MCP server's tools
in a ``mcp__<server>`` namespace; the server is reached through the gateway), then every
lane runs one shell command (Codex's ``exec_command``) that fixes the bug, then ends.
Both lanes must score 1.0 with the tokens the API sent, the MCP lane's transcript must
show the tool's answer, and no key may reach a container or a file.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from temporalio.client import Client

from durabench.settings.values import Settings
from tests.integration.real_sessions import (
    FIX,
    FOUND,
    FULL,
    TASK,
    assert_whole_session,
    real_session,
    without_a_key,
)
from tests.model_upstream import Received, Reply, openai_stream

pytestmark = pytest.mark.docker

MODEL = "gpt-5-codex"
NAMESPACE = "mcp__sourcegraph"


def _namespaces(body: dict[str, Any]) -> set[str]:
    return {str(t.get("name")) for t in body.get("tools") or [] if t.get("type") == "namespace"}


def _model(received: Received) -> Reply:
    """The scripted model: the MCP search if offered, then the fix, then the end."""
    body = received.body if isinstance(received.body, dict) else {}
    model = str(body.get("model") or MODEL)
    steps: list[dict[str, Any]] = []
    if NAMESPACE in _namespaces(body):
        steps.append({"namespace": NAMESPACE, "name": "search", "arguments": {"query": "gelu"}})
    steps.append({"name": "exec_command", "arguments": {"cmd": FIX}})
    inputs = body.get("input") or []
    done = len([i for i in inputs if i.get("type") == "function_call_output"])
    if done < len(steps):
        step = {"call_id": f"call_{done}", **steps[done]}
        return openai_stream(model, [step], input_tokens=1000, cached=100, output_tokens=30)
    final = "Fixed the GELU coefficient."
    return openai_stream(model, final, input_tokens=1200, cached=200, output_tokens=12)


async def test_real_codex_cli_runs_a_whole_session_offline_through_the_gateway(
    client: Client,
    home: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    session = await real_session(
        "codex-cli",
        MODEL,
        _model,
        ("OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),  # as OpenAI clients name the API
        key=f"sk-proj-{uuid.uuid4().hex}",
        client=client,
        home=home,
        monkeypatch=monkeypatch,
    )
    assert_whole_session(session, capfd)
    models = session.model_requests()
    assert {(r.method, r.path) for r in models} == {("POST", "/v1/responses")}  # no WebSocket
    assert {r.headers.get("authorization") for r in models} == {f"Bearer {session.key}"}
    offered: dict[str, set[bool]] = {}  # per Codex session: was the MCP namespace offered?
    for r in models:
        offered.setdefault(r.headers["session-id"], set()).add(NAMESPACE in _namespaces(r.body))
    assert sorted(offered.values(), key=sorted) == [{False}, {True}]  # on one lane, always
    items = [e["item"] for e in session.transcript(FULL) if e.get("type") == "item.completed"]
    [call] = [i for i in items if i.get("type") == "mcp_tool_call"]
    assert (call["server"], call["tool"], call["status"]) == ("sourcegraph", "search", "completed")
    assert FOUND in json.dumps(call["result"])
    assert "mcp_tool_call" not in json.dumps(session.transcript("baseline"))


async def test_real_codex_cli_without_a_key_is_infra_auth(
    client: Client, home: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no key on the worker the agent gets no placeholder: it cannot log in."""
    paths = await without_a_key(
        "codex-cli",
        MODEL,
        ("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"),
        client=client,
        home=home,
        monkeypatch=monkeypatch,
    )
    stdout = (paths.attempt(TASK, "baseline", 1) / "agent" / "stdout.txt").read_text()
    assert "Missing environment variable: `OPENAI_API_KEY`" in stdout  # what codex says
