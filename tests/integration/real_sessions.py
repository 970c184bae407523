"""What the real-CLI session tests share: the task, its fix, and a small MCP server.

Each real CLI (``test_real_*.py``) runs a whole session on ``tensor-gelu-001`` against a
scripted model API on loopback, through durabench and its model gateway: on the MCP lane
the script first calls the MCP server's search tool, then every lane runs :data:`FIX`,
then ends. The MCP server lives in the same upstream under ``/sg``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from durabench.agents import CliAgent, agent_class
from durabench.models.agent import AgentSpec
from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from tests.integration.runs import finished_run
from tests.model_upstream import ModelUpstream, Received, Reply

__all__ = [
    "FIX",
    "FOUND",
    "FULL",
    "TASK",
    "Session",
    "assert_whole_session",
    "leaked",
    "mcp_reply",
    "real_session",
    "without_a_key",
]

TASK = "tensor-gelu-001"
FULL = "sourcegraph_full"
FIX = "sed -i 's/0.44715/0.044715/' /workspace/tinytensor/activations.py"
"""The one shell command that fixes the task's bug."""
FOUND = "activations.py:12: the cubic coefficient of GELU is 0.044715"
"""What the MCP server's search tool answers: the transcript must show it."""


def mcp_reply(received: Received) -> Reply:
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


def leaked(root: Path, secrets: tuple[str, ...]) -> list[str]:
    """Files under ``root`` that hold any of ``secrets``."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and any(s.encode() in path.read_bytes() for s in secrets):
            found.append(str(path))
    return found


@dataclass
class Session:
    """A finished run of one real CLI, both lanes, and what its API saw."""

    paths: RunPaths
    result: RunResult
    api: ModelUpstream
    key: str
    """The worker's real model key."""
    mcp_token: str
    """The worker's real MCP token."""

    def model_requests(self) -> list[Received]:
        """What reached the model API (not the MCP server)."""
        return [r for r in self.api.received if not r.path.startswith("/sg/")]

    def transcript(self, lane: str) -> list[dict[str, Any]]:
        """The lane's transcript events."""
        text = (self.paths.attempt(TASK, lane, 1) / "agent" / "stdout.txt").read_text()
        return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


async def real_session(
    agent: str,
    model: str,
    script: Callable[[Received], Reply],
    env: tuple[str, str, str],
    *,
    key: str,
    client: Client,
    home: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> Session:
    """Run ``agent`` on the real task, both lanes, against ``script`` (MCP under ``/sg``).

    ``env`` names the worker's key variable, its base URL variable and what the base URL
    ends in; ``key`` is the real key's value. Other key variables of the CLI are unset.
    """
    key_env, base_env, suffix = env
    mcp_token = f"sgp_{uuid.uuid4().hex}"
    monkeypatch.setenv(key_env, key)
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", mcp_token)

    def answer(received: Received) -> Reply:
        return mcp_reply(received) if received.path.startswith("/sg/") else script(received)

    with ModelUpstream(answer) as api:
        monkeypatch.setenv(base_env, api.url + suffix)
        monkeypatch.setenv("SOURCEGRAPH_URL", api.url + "/sg")
        paths, result = await _run(agent, model, client, home)
    return Session(paths, result, api, key, mcp_token)


async def _run(
    agent: str, model: str, client: Client, home: Settings
) -> tuple[RunPaths, RunResult]:
    request = RunRequest(
        run_id=f"real-{uuid.uuid4().hex[:6]}",
        suite="real",
        agent=AgentSpec(name=agent, model=model),
        infra_retries=0,
    )
    return await finished_run(request, client, home)


def assert_whole_session(session: Session, capfd: pytest.CaptureFixture[str]) -> None:
    """Both lanes fixed the bug on their own, metered exactly, MCP reached, no key kept."""
    result, api = session.result, session.api
    assert {a.lane: (a.exit_class, a.reward) for a in result.attempts} == {
        "baseline": ("completed", 1.0),
        FULL: ("completed", 1.0),
    }, [a.reason for a in result.attempts]
    sent = {k: api.sent.get(k, 0) for k in ("input", "output", "cache_read", "cache_write")}
    metered = {k: sum(getattr(a.tokens, k) for a in result.attempts) for k in sent}
    assert metered == sent  # the gateway's meter is exactly what the API sent
    cli = agent_class(result.plan.request.agent.name)
    assert issubclass(cli, CliAgent)
    assert {a.cli_version for a in result.attempts} == {cli.version}  # what ran, named
    assert all(a.agent_image_id not in ("", a.task_image_id) for a in result.attempts)
    calls = [r.body for r in api.received if r.path.startswith("/sg/")]
    assert any(c.get("method") == "tools/call" for c in calls if isinstance(c, dict))
    assert FOUND in json.dumps(session.transcript(FULL))  # the MCP lane read its answer
    out, err = capfd.readouterr()
    for secret in (session.key, session.mcp_token):
        assert not leaked(session.paths.root, (secret,))
        assert secret not in out + err


async def without_a_key(
    agent: str,
    model: str,
    unset: tuple[str, ...],
    *,
    client: Client,
    home: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> RunPaths:
    """Run ``agent`` with none of ``unset`` on the worker: no key, no placeholder.

    Both lanes must end as ``infra_auth`` (the CLI cannot log in: never the model's
    fault) and the task be excluded.
    """
    for variable in unset:
        monkeypatch.delenv(variable, raising=False)
    paths, result = await _run(agent, model, client, home)
    assert {a.lane: a.exit_class for a in result.attempts} == {
        "baseline": "infra_auth",
        FULL: "infra_auth",
    }, [a.reason for a in result.attempts]
    assert set(result.excluded) == {TASK}
    return paths
