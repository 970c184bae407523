"""The gateway passes on only the endpoints a coding CLI needs, by method and exact path.

Each refusal is a 403 the agent can read and a ledger line; nothing refused reaches the
API. The raw path is what is checked, so no later normalisation can turn a refused path
into another one upstream.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.gateway import read_ledger
from durabench.gateway.allowlist import allowed, path_fault
from durabench.gateway.ledger import LedgerEntry
from tests.gateway_rig import KEYS, gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
BODY = {"model": MODEL, "max_tokens": 10, "messages": []}


def _ok(received: Received) -> Reply:
    if received.path.startswith("/v1/models") or received.method != "POST":
        return Reply(body={"data": []})
    return anthropic_stream(MODEL, [{"type": "text", "text": "hi"}])


def _entries(ledger: Path) -> list[LedgerEntry]:
    return [LedgerEntry.model_validate_json(line) for line in ledger.read_text().splitlines()]


REFUSED = [
    ("anthropic", "POST", "/anthropic/v1/messages/./batches"),
    ("anthropic", "POST", "/anthropic/v1/messages/../messages/batches"),
    ("anthropic", "POST", "/anthropic/v1/messages/batches"),
    ("anthropic", "POST", "/anthropic/v1/messages%2f..%2fbatches"),
    ("anthropic", "POST", "/anthropic/v1/messages/%2e/batches"),
    ("anthropic", "POST", "/anthropic/v1//messages"),
    ("anthropic", "POST", "/anthropic/v1/messages\\..\\files"),
    ("anthropic", "GET", "/anthropic/v1/messages"),
    ("anthropic", "POST", "/anthropic/v1/complete"),
    ("anthropic", "POST", "/anthropic/v1/files"),
    ("openai", "DELETE", "/openai/v1/models/ft:gpt-4o:org:custom:abc123"),
    ("openai", "GET", "/openai/v1/chat/completions"),
    ("openai", "GET", "/openai/v1/chat/completions/chatcmpl-123"),
    ("openai", "GET", "/openai/v1/responses/resp_123"),
    ("openai", "POST", "/openai/v1/completions"),
    ("openai", "POST", "/openai/v1/files"),
    ("gemini", "POST", "/gemini/v1beta/models/gemini-2.5-pro:batchGenerateContent"),
    ("gemini", "POST", "/gemini/v1beta/tunedModels/x:generateContent"),
    ("gemini", "POST", "/gemini/v1beta/cachedContents"),
    # a query the API would read another way: fields= strips the usage and the end
    ("gemini", "POST", f"/gemini/v1beta/models/{MODEL}:streamGenerateContent?alt=sse&fields=x"),
    ("gemini", "POST", f"/gemini/v1beta/models/{MODEL}:generateContent?alt=proto"),
    ("anthropic", "POST", "/anthropic/v1/messages?beta=true&other=1"),
    ("openai", "POST", "/openai/v1/responses?stream=false"),
]


@pytest.mark.parametrize(("provider", "method", "path"), REFUSED)
async def test_anything_but_a_model_endpoint_is_refused_with_403_and_a_ledger_line(
    tmp_path: Path, provider: str, method: str, path: str
) -> None:
    async with gateway_rig(tmp_path, _ok) as rig:
        token = rig.grant(provider, model=MODEL)
        response = await rig.send(method, path, token, json=BODY)
    assert response.status_code == 403, response.text
    assert response.json()["error"]["type"] == "permission_error"
    assert "durabench gateway" in response.json()["error"]["message"]
    assert rig.upstream.received == []  # the real key went nowhere
    (entry,) = _entries(rig.ledger)
    assert (entry.status, entry.refused) == (403, "path")
    assert KEYS[provider][1] not in rig.ledger.read_text()


ALLOWED = [
    ("anthropic", "POST", "/anthropic/v1/messages?beta=true", "/v1/messages?beta=true"),
    ("anthropic", "POST", "/anthropic/v1/messages/count_tokens", "/v1/messages/count_tokens"),
    ("anthropic", "GET", "/anthropic/v1/models", "/v1/models"),
    ("anthropic", "GET", f"/anthropic/v1/models/{MODEL}", f"/v1/models/{MODEL}"),
    ("openai", "GET", "/openai/v1/models", "/v1/models"),
    ("gemini", "GET", "/gemini/v1beta/models", "/v1beta/models"),
    ("gemini", "GET", "/gemini/v1beta/models?pageSize=50", "/v1beta/models?pageSize=50"),
]


@pytest.mark.parametrize(("provider", "method", "path", "upstream"), ALLOWED)
async def test_the_endpoints_a_cli_needs_reach_the_api_as_they_were_checked(
    tmp_path: Path, provider: str, method: str, path: str, upstream: str
) -> None:
    async with gateway_rig(tmp_path, _ok) as rig:
        token = rig.grant(provider, model=MODEL)
        response = await rig.send(method, path, token, json=BODY if method == "POST" else None)
    assert response.status_code == 200, response.text
    (seen,) = rig.upstream.received
    assert (seen.method, seen.path) == (method, upstream)


def test_the_raw_path_is_refused_before_matching_when_it_could_be_read_two_ways() -> None:
    for raw in ("/v1/./x", "/v1/../x", "/v1/.", "/v1//x", "/v1/%2e", "/v1\\x", "/v1/é", "v1"):
        assert path_fault(raw), raw
    assert path_fault("/v1beta/models/gemini-2.5-pro:streamGenerateContent") == ""
    assert allowed("openai", "POST", "/v1/chat/completions") is not None
    assert allowed("openai", "GET", "/v1/chat/completions") is None
    assert allowed("gemini", "POST", "/v1beta/models/a/b:generateContent") is None


async def test_the_mcp_endpoint_is_passed_on_exactly_and_nothing_beside_it(
    tmp_path: Path,
) -> None:
    def mcp(received: Received) -> Reply:
        return Reply(body={"jsonrpc": "2.0", "id": 1, "result": {}})

    server = {"name": "sg", "url_env": "SG_URL", "token_env": "SG_TOKEN", "url_suffix": "/.api/mcp"}
    async with gateway_rig(tmp_path, mcp) as rig:
        token = rig.grant(model=MODEL, mcp=server)
        for path in ("/mcp/.api/mcp/../graphql", "/mcp/.api/mcp/x", "/mcp/.api/mcp%2f..", "/mcp"):
            refused = await rig.send("POST", path, f"token {token}", json={})
            assert refused.status_code == 403, path
        assert (await rig.send("PUT", "/mcp/.api/mcp", f"token {token}")).status_code == 403
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        answered = await rig.send("POST", "/mcp/.api/mcp", f"token {token}", json=initialize)
    assert answered.status_code == 200
    assert [(r.method, r.path) for r in rig.upstream.received] == [("POST", "/sg/.api/mcp")]
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.mcp_requests == 6 and metered.mcp_answered == 1
