"""An MCP server works when it answers as one: a JSON-RPC result, not an HTTP 200.

A web page at a wrong URL answers every path with 200. The gateway relays what the MCP
server sends and notes, on each MCP line of the ledger, the JSON-RPC method the agent
called and whether the server answered it with a JSON-RPC result; the ledger counts an
MCP server as answering only from a result to ``initialize`` or ``tools/list``, and the
classifier reads that count (issue 52, defect 9). The CLI's own report stays its word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from durabench.classify import classify
from durabench.gateway import read_ledger
from durabench.gateway.ledger import LedgerEntry
from durabench.models.verdict import ClassifyInput
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
SERVER = {"name": "sg", "url_env": "SG_URL", "token_env": "SG_TOKEN", "url_suffix": "/.api/mcp"}
PAGE = b"<!doctype html><html><body>Welcome to our site</body></html>"
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _web_page_everywhere(received: Received) -> Reply:
    """A model API, and beside it an HTTP server that answers every other path with 200."""
    if received.path.startswith("/v1/messages"):
        return anthropic_stream(MODEL, [{"type": "text", "text": "done"}])
    return Reply(raw=PAGE, headers={"content-type": "text/html"})


def _sse_mcp(received: Received) -> Reply:
    """An MCP server answering over streamable HTTP's event stream."""
    body = received.body if isinstance(received.body, dict) else {}
    result = {"jsonrpc": "2.0", "id": body.get("id"), "result": {"tools": []}}
    return Reply(events=[result], headers={"content-type": "text/event-stream"})


def _session(cli_status: str) -> tuple[dict[str, Any], ...]:
    init = {
        "type": "system",
        "subtype": "init",
        "model": MODEL,
        "mcp_servers": [{"name": "sg", "status": cli_status}],
    }
    done = {"type": "result", "subtype": "success", "is_error": False, "result": "Done."}
    return init, done


def _lines(ledger: Path) -> list[LedgerEntry]:
    return [LedgerEntry.model_validate_json(line) for line in ledger.read_text().splitlines()]


async def test_an_mcp_url_that_answers_200_with_a_web_page_is_an_mcp_failure(
    tmp_path: Path,
) -> None:
    async with gateway_rig(tmp_path, _web_page_everywhere) as rig:
        token = rig.grant(model=MODEL, mcp=SERVER, agent="claude-code")
        for call in (INITIALIZE, TOOLS):
            r = await rig.send("POST", "/mcp/.api/mcp", f"token {token}", json=call)
            assert r.status_code == 200 and r.content == PAGE  # relayed as the server sent it
        body = {"model": MODEL, "max_tokens": 10, "stream": True, "messages": []}
        assert (await rig.send("POST", "/anthropic/v1/messages", token, json=body)).is_success
    mcp = [e for e in _lines(rig.ledger) if e.provider == "mcp"]
    assert [(e.status, e.rpc_method, e.rpc_result) for e in mcp] == [
        (200, "initialize", False),
        (200, "tools/list", False),
    ]
    metered = read_ledger(rig.ledger)
    assert metered is not None and (metered.mcp_requests, metered.mcp_answered) == (2, 0)
    for cli_says in ("failed", "connected"):  # the CLI's word neither excludes nor rescues
        verdict = classify(
            ClassifyInput(
                events=_session(cli_says),
                transcript_format="claude-code",
                requested_model=MODEL,
                files_changed=1,
                mcp_via_gateway=True,
                mcp_servers=("sg",),
                metered=metered,
            )
        )
        assert verdict.exit_class == "infra_other", verdict.reason
        assert "none answered as an MCP server" in verdict.reason


async def test_a_json_rpc_result_over_an_event_stream_is_a_working_server(
    tmp_path: Path,
) -> None:
    async with gateway_rig(tmp_path, _sse_mcp) as rig:
        token = rig.grant(model=MODEL, mcp=SERVER)
        for call in (INITIALIZE, TOOLS):
            r = await rig.send("POST", "/mcp/.api/mcp", f"token {token}", json=call)
            assert r.status_code == 200 and '"result"' in r.text
    mcp = _lines(rig.ledger)
    assert [(e.rpc_method, e.rpc_result) for e in mcp] == [
        ("initialize", True),
        ("tools/list", True),
    ]
    metered = read_ledger(rig.ledger)
    assert metered is not None and (metered.mcp_requests, metered.mcp_answered) == (2, 2)


ANSWERS: list[tuple[str, bytes, bool]] = [
    # (what the server sent to `initialize` with id 0, whether that is a JSON-RPC result)
    ("a result", b'{"jsonrpc": "2.0", "id": 0, "result": {}}', True),
    ("a JSON-RPC error", b'{"jsonrpc": "2.0", "id": 0, "error": {"code": -32601}}', False),
    ("another id's result", b'{"jsonrpc": "2.0", "id": 7, "result": {}}', False),
    ("no jsonrpc version", b'{"id": 0, "result": {}}', False),
    ("a result that is no object", b'{"jsonrpc": "2.0", "id": 0, "result": "ok"}', False),
    ("a JSON page", b'{"status": "ok"}', False),
    ("an empty body", b"", False),
    ("a page", PAGE, False),
    ("a result as an event", b'data: {"jsonrpc": "2.0", "id": 0, "result": {}}\n\n', True),
]


async def test_only_a_json_rpc_result_to_the_call_counts_as_an_answer(tmp_path: Path) -> None:
    """The family: whatever else a server answers with 200, it is not an MCP answer."""
    for n, (name, raw, is_result) in enumerate(ANSWERS):
        kind = "text/event-stream" if raw.startswith(b"data:") else "application/json"

        def script(received: Received, raw: bytes = raw, kind: str = kind) -> Reply:
            return Reply(raw=raw, headers={"content-type": kind})

        (tmp_path / str(n)).mkdir()
        async with gateway_rig(tmp_path / str(n), script) as rig:
            token = rig.grant(model=MODEL, mcp=SERVER)
            r = await rig.send("POST", "/mcp/.api/mcp", f"token {token}", json=INITIALIZE)
            assert r.status_code == 200, name
        (line,) = _lines(rig.ledger)
        assert (line.rpc_method, line.rpc_result) == ("initialize", is_result), name


async def test_a_result_to_a_call_other_than_initialize_or_tools_list_is_no_proof(
    tmp_path: Path,
) -> None:
    """``ping`` can be answered by anything that echoes; only the handshake and the tool
    list say the server serves MCP."""

    def echo(received: Received) -> Reply:
        body = received.body if isinstance(received.body, dict) else {}
        return Reply(body={"jsonrpc": "2.0", "id": body.get("id"), "result": {}})

    async with gateway_rig(tmp_path, echo) as rig:
        token = rig.grant(model=MODEL, mcp=SERVER)
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        assert (await rig.send("POST", "/mcp/.api/mcp", f"token {token}", json=ping)).is_success
        batch = json.dumps([TOOLS]).encode()
        r = await rig.send("POST", "/mcp/.api/mcp", f"token {token}", content=batch)
        assert r.is_success
    lines = _lines(rig.ledger)
    assert [(e.rpc_method, e.rpc_result) for e in lines] == [("ping", True), ("", False)]
    metered = read_ledger(rig.ledger)
    assert metered is not None and (metered.mcp_requests, metered.mcp_answered) == (2, 0)
