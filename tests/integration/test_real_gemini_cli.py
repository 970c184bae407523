"""The real Gemini CLI (npm) through durabench and the model gateway, offline.

A scripted Gemini API (``streamGenerateContent``, ``alt=sse``) on loopback plays a
session per lane: on the MCP lane the model first calls the MCP server's search tool
(reached through the gateway), then every lane runs one shell command (Gemini CLI's
``run_shell_command``) that fixes the bug, then ends. Both lanes must score 1.0 with the
tokens the API sent, the MCP lane's transcript must show the tool's answer, and no key
may reach a container or a file.
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
from tests.model_upstream import Received, Reply, gemini_stream

pytestmark = pytest.mark.docker

MODEL = "gemini-2.5-flash"
SEARCH = "mcp_sourcegraph_search"
"""How Gemini CLI names an MCP server's tool: ``mcp_<server>_<tool>``."""


def _functions(body: dict[str, Any]) -> set[str]:
    return {
        str(f.get("name"))
        for group in body.get("tools") or []
        for f in group.get("functionDeclarations") or []
    }


def _model(received: Received) -> Reply:
    """The scripted model: the MCP search if offered, then the fix, then the end."""
    body = received.body if isinstance(received.body, dict) else {}
    model = received.path.split("/models/", 1)[-1].split(":", 1)[0]
    offered = _functions(body)
    steps: list[dict[str, Any]] = []
    if SEARCH in offered:
        steps.append({"name": SEARCH, "args": {"query": "gelu"}})
    steps.append({"name": "run_shell_command", "args": {"command": FIX}})
    done = sum(
        1
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if "functionResponse" in part
    )
    if done < len(steps):
        return gemini_stream(model, [steps[done]], prompt=1000, output_tokens=30, cached=100)
    final = "Fixed the GELU coefficient."
    return gemini_stream(model, final, prompt=1200, output_tokens=12, cached=200)


async def test_real_gemini_cli_runs_a_whole_session_offline_through_the_gateway(
    client: Client,
    home: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    session = await real_session(
        "gemini-cli",
        MODEL,
        _model,
        ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", ""),
        key=f"AIza{uuid.uuid4().hex}",
        client=client,
        home=home,
        monkeypatch=monkeypatch,
    )
    assert_whole_session(session, capfd)
    result = session.result
    assert all("the transcript reports" not in a.reason for a in result.attempts)  # agrees
    models = session.model_requests()
    assert {r.path for r in models} == {f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"}
    assert {r.headers.get("x-goog-api-key") for r in models} == {session.key}  # outside only
    events = session.transcript(FULL)
    [use] = [e for e in events if e.get("type") == "tool_use" and e["tool_name"] == SEARCH]
    results = [e for e in events if e.get("type") == "tool_result"]
    [answer] = [e for e in results if e["tool_id"] == use["tool_id"]]
    assert (answer["status"], answer["output"]) == ("success", FOUND)
    assert SEARCH not in json.dumps(session.transcript("baseline"))


async def test_real_gemini_cli_without_a_key_is_infra_auth(
    client: Client, home: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no key on the worker the agent gets no placeholder: it cannot log in."""
    paths = await without_a_key(
        "gemini-cli",
        MODEL,
        ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
        client=client,
        home=home,
        monkeypatch=monkeypatch,
    )
    stderr = (paths.attempt(TASK, "baseline", 1) / "agent" / "stderr.txt").read_text()
    assert "you must specify the GEMINI_API_KEY environment variable" in stderr  # gemini's
