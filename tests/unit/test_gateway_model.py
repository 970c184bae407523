"""The gateway serves the attempt's requested model only, and the side models its CLI needs.

A request naming any other model is refused with 403 before the key is used, and
ledgered, so an agent cannot do the work on a stronger model and be scored as the
requested one.
"""

from __future__ import annotations

from pathlib import Path

from durabench.agents import ClaudeCodeAgent, CodexCliAgent, GeminiCliAgent
from durabench.gateway import read_ledger
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream, gemini_stream

MODEL = "claude-haiku-4-5"
OTHER = "claude-opus-4-1"


def _echo(received: Received) -> Reply:
    if "/models/" in received.path:  # Gemini names the model in the path
        return gemini_stream("gemini-2.5-flash", "ok", prompt=10, output_tokens=2)
    body = received.body if isinstance(received.body, dict) else {}
    return anthropic_stream(str(body.get("model")), [{"type": "text", "text": "ok"}])


def _body(model: str | None) -> dict[str, object]:
    return {"max_tokens": 10, "messages": []} | ({"model": model} if model else {})


async def test_a_request_for_another_model_is_refused_and_never_reaches_the_api(
    tmp_path: Path,
) -> None:
    async with gateway_rig(tmp_path, _echo) as rig:
        token = rig.grant(model=MODEL)
        first = await rig.send("POST", "/anthropic/v1/messages", token, json=_body(MODEL))
        others = [
            await rig.send("POST", "/anthropic/v1/messages", token, json=_body(OTHER))
            for _ in range(3)
        ]
        unnamed = await rig.send("POST", "/anthropic/v1/messages", token, json=_body(None))
    assert first.status_code == 200
    for refused in [*others, unnamed]:
        assert refused.status_code == 403
        assert refused.json()["error"]["type"] == "permission_error"
        assert f"it may use {MODEL}" in refused.json()["error"]["message"]
    assert [r.body["model"] for r in rig.upstream.received] == [MODEL]
    metered = read_ledger(rig.ledger)
    assert metered is not None
    assert (metered.requests, metered.refused_model, metered.served_models) == (5, 4, (MODEL,))
    assert metered.auth_refused == 0  # the gateway's refusal is no answer from the API


async def test_an_auxiliary_model_and_a_dated_snapshot_are_served(tmp_path: Path) -> None:
    aux = "claude-haiku-4-5"
    async with gateway_rig(tmp_path, _echo) as rig:
        token = rig.grant(model="claude-sonnet-4-5", auxiliary_models=[aux])
        for model in ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", aux):
            answer = await rig.send("POST", "/anthropic/v1/messages", token, json=_body(model))
            assert answer.status_code == 200, model
        sneaked = "claude-sonnet-4-5-extended"
        answer = await rig.send("POST", "/anthropic/v1/messages", token, json=_body(sneaked))
        assert answer.status_code == 403


async def test_gemini_is_held_to_the_model_its_path_names(tmp_path: Path) -> None:
    async with gateway_rig(tmp_path, _echo) as rig:
        token = rig.grant("gemini", model="gemini-2.5-flash")
        path = "/gemini/v1beta/models/{}:streamGenerateContent?alt=sse"
        ok = await rig.send("POST", path.format("gemini-2.5-flash"), token, json={})
        refused = await rig.send("POST", path.format("gemini-2.5-pro"), token, json={})
    assert (ok.status_code, refused.status_code) == (200, 403)
    assert len(rig.upstream.received) == 1


def test_the_auxiliary_models_are_the_adapters_explicit_config() -> None:
    """Claude Code's small model is pinned in its environment and granted; the other
    CLIs ask for the requested model only (their real offline sessions show it)."""
    claude = ClaudeCodeAgent()
    assert claude.auxiliary_models == ("claude-haiku-4-5",)
    env = claude.env(None)  # type: ignore[arg-type]
    assert env["ANTHROPIC_SMALL_FAST_MODEL"] == env["ANTHROPIC_DEFAULT_HAIKU_MODEL"]
    assert env["ANTHROPIC_SMALL_FAST_MODEL"] in claude.auxiliary_models
    assert CodexCliAgent.auxiliary_models == GeminiCliAgent.auxiliary_models == ()


async def test_gemini_is_checked_by_the_model_in_its_path_not_a_body_field(
    tmp_path: Path,
) -> None:
    async with gateway_rig(tmp_path, _echo) as rig:
        token = rig.grant("gemini", model="gemini-2.5-flash")
        path = "/gemini/v1beta/models/gemini-2.5-pro:generateContent"
        body = {"model": "gemini-2.5-flash", "contents": []}  # names the granted one
        refused = await rig.send("POST", path, token, json=body)
    assert refused.status_code == 403  # the API would serve the path's model
    assert rig.upstream.received == []
