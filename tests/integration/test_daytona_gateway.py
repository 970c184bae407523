"""A coding agent that calls a model on Daytona: through the gateway's public address only.

The worker's gateway listens on an internal Docker network this test makes; its address
there is the gateway's public URL (a private address, so plain http is allowed). The
stand-in attaches a sandbox whose create carries a network allow-list to that network,
and to nothing else. The agent is claude-code, its CLI added by durabench as on real
Daytona (the worker's tools directory, holding a stand-in ``claude`` that makes one model
call with the key it was handed, applies the fix and prints a Claude Code transcript).
The scripted upstream must see the real key; the sandbox must hold only the placeholder.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import Iterator

import docker
import docker.errors
import pytest
from temporalio.client import Client

from durabench.agents.agent_registry import get_agent
from durabench.gateway.network import ensure_gateway_network
from durabench.settings.values import Settings
from tests.integration.runs import (
    STAND_IN_VERSIONS,
    baseline_request,
    containers_of,
    finished_run,
    gelu_task,
)
from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream

pytestmark = pytest.mark.docker
pytest.importorskip("daytona")

MODEL = "claude-haiku-4-5"
FIX = "sed -i 's/0.44715/0.044715/' /workspace/tinytensor/activations.py"
TRANSCRIPT = [
    {"type": "system", "subtype": "init", "model": MODEL, "session_id": "s-1"},
    {"type": "assistant", "message": {"model": MODEL, "content": [{"type": "text", "text": "ok"}]}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed gelu."},
]
CLAUDE = f"""#!/bin/sh
[ "$1" = --version ] && {{ echo "{STAND_IN_VERSIONS["claude"]}"; exit 0; }}
env > /logs/agent/env.txt
python3 - > /logs/agent/model-call 2>&1 <<'PY'
import json, os, urllib.request
url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
body = json.dumps({{"model": "{MODEL}", "stream": True, "messages": []}}).encode()
headers = {{"x-api-key": os.environ["ANTHROPIC_API_KEY"], "content-type": "application/json"}}
with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers)) as r:
    print(r.status, len(r.read()))
PY
{FIX}
cat <<'JSON'
{"".join(json.dumps(e) + chr(10) for e in TRANSCRIPT)}JSON
"""
"""The stand-in ``claude``: one model call through the gateway, the fix, a transcript."""


def _scripted(received: Received) -> Reply:
    return anthropic_stream(MODEL, [{"type": "text", "text": "ok"}], input_tokens=100)


def _install_stand_in(settings: Settings) -> None:
    """Put the stand-in where the worker's npm install of claude-code would be."""
    from durabench.sandbox.docker.agent_images import _slug

    install = get_agent("claude-code").install_spec()
    assert install is not None
    bin_dir = settings.agent_tools_dir / _slug(install) / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "claude").write_text(CLAUDE)
    (bin_dir / "claude").chmod(0o755)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@pytest.fixture
def gateway_network(standin: object) -> Iterator[tuple[str, str]]:
    """An internal network of this test's, the stand-in's allow-listed sandboxes on it."""
    client = docker.from_env()
    name = f"durabench-dgw-{uuid.uuid4().hex[:8]}"
    host = ensure_gateway_network(client, name)
    standin.network = name  # type: ignore[attr-defined]
    try:
        yield name, host
    finally:
        standin.network = None  # type: ignore[attr-defined]
        try:
            client.networks.get(name).remove()
        except docker.errors.NotFound:
            pass
        client.close()


async def test_claude_code_calls_the_model_through_the_public_gateway_on_daytona(
    client: Client,
    settings: Settings,
    standin: object,
    gateway_network: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    network, host = gateway_network
    public = f"http://{host}:{_free_port(host)}"
    on_daytona = settings.model_copy(
        update={
            "sandbox": "daytona",
            "gateway_network": network,
            "gateway_port": int(public.rsplit(":", 1)[1]),
            "gateway_public_url": public,
        }
    )
    _install_stand_in(on_daytona)
    gelu_task(on_daytona.home, "dgw", "dgw-gelu")
    real_key = f"sk-ant-{uuid.uuid4().hex}"
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    monkeypatch.setenv("DURABENCH_DAYTONA_BACKOFF_SEC", "0.05")
    monkeypatch.setenv("ANTHROPIC_API_KEY", real_key)
    sent = len(standin.create_requests)  # type: ignore[attr-defined]
    request = baseline_request("dgw", "dgw", "claude-code", MODEL)
    with ModelUpstream(_scripted) as upstream:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
        paths, result = await finished_run(request, client, on_daytona)

    (attempt,) = result.attempts
    assert (attempt.exit_class, attempt.reward) == ("completed", 1.0), attempt
    kept = paths.attempt("dgw-gelu", "baseline", 1) / "agent"
    assert (kept / "model-call").read_text().startswith("200 "), (kept / "model-call").read_text()
    keys = [
        {k.lower(): v for k, v in r.headers.items()}.get("x-api-key") for r in upstream.received
    ]
    assert keys == [real_key]
    lines = (kept / "env.txt").read_text().splitlines()
    env = dict(line.split("=", 1) for line in lines if "=" in line)
    assert env["ANTHROPIC_BASE_URL"].startswith(f"{public}/"), env
    assert env["ANTHROPIC_API_KEY"] and env["ANTHROPIC_API_KEY"] != real_key
    assert real_key not in (kept / "env.txt").read_text()
    (create,) = standin.create_requests[sent:]  # type: ignore[attr-defined]
    assert create.network_allow_list == f"{host}/32" and not create.network_block_all
    assert real_key not in create.model_dump_json()
    assert standin.containers() == []  # type: ignore[attr-defined]
    assert containers_of(request.run_id) == []
