"""Whether a streamed answer reached its end: a stream the API cut is the host's failure.

The gateway keeps reading the API's stream to its end even when the agent hangs up, so a
stream that stops before its closing event was cut on the API's side (or the way to it),
and a session that then fails was failed by infrastructure, on evidence the agent cannot
write. Each provider closes its stream its own way.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from durabench.gateway import ResponseMeter

SSE = "text/event-stream"


def _sse(*events: dict[str, Any] | str) -> bytes:
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    return b"".join(f"data: {line}\n\n".encode() for line in lines)


START = {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 3}}}
CHUNK = {"choices": [{"delta": {"content": "x"}, "finish_reason": None}]}
GEMINI = {"candidates": [{"content": {"parts": [{"text": "x"}]}}]}

CASES: dict[str, tuple[str, bytes, bytes]] = {
    "anthropic": (
        "anthropic",
        _sse(START, {"type": "message_delta", "usage": {"output_tokens": 2}}),
        _sse({"type": "message_stop"}),
    ),
    "anthropic error event": ("anthropic", _sse(START), _sse({"type": "error", "error": {}})),
    "openai responses": (
        "openai",
        _sse({"type": "response.created", "response": {"model": "m"}}),
        _sse({"type": "response.completed", "response": {"model": "m"}}),
    ),
    "openai responses failed": (
        "openai",
        _sse({"type": "response.created", "response": {"model": "m"}}),
        _sse({"type": "response.failed", "response": {"model": "m"}}),
    ),
    "openai chat": ("openai", _sse(CHUNK), _sse("[DONE]")),
    "gemini": ("gemini", _sse(GEMINI), _sse({"candidates": [{"finishReason": "STOP"}]})),
}


@pytest.mark.parametrize("case", CASES)
def test_a_stream_ends_only_with_its_closing_event(case: str) -> None:
    provider, body, closing = CASES[case]
    cut = ResponseMeter(provider, SSE)  # type: ignore[arg-type]
    cut.feed(body)
    cut.usage()
    assert not cut.ended
    whole = ResponseMeter(provider, SSE)  # type: ignore[arg-type]
    for i in range(0, len(body + closing), 7):
        whole.feed((body + closing)[i : i + 7])
    whole.usage()
    assert whole.ended


def test_a_json_answer_ends_when_it_parses() -> None:
    whole = ResponseMeter("anthropic", "application/json")
    whole.feed(json.dumps({"model": "m", "usage": {"input_tokens": 1}}).encode())
    whole.usage()
    assert whole.ended
    cut = ResponseMeter("anthropic", "application/json")
    cut.feed(b'{"model": "m", "usage": {"inp')
    cut.usage()
    assert not cut.ended


def test_a_chat_stream_ends_with_its_finish_reason_even_before_done() -> None:
    finished = {"choices": [{"delta": {}, "finish_reason": "stop"}]}
    meter = ResponseMeter("openai", SSE)
    meter.feed(_sse(CHUNK, finished))
    meter.usage()
    assert meter.ended


def test_data_that_is_no_event_ends_nothing() -> None:
    meter = ResponseMeter("anthropic", SSE)
    meter.feed(b"data: not json\n\ndata: [1, 2]\n\n")
    meter.usage()
    assert not meter.ended


def test_an_answer_too_large_to_read_is_not_taken_for_a_cut_one() -> None:
    from durabench.gateway.meter import MAX_JSON_BYTES

    big = ResponseMeter("openai", "application/json")  # e.g. many choices with logprobs
    big.feed(b'{"choices": [' + b" " * MAX_JSON_BYTES + b"]}")
    big.usage()
    assert big.unreadable and not big.ended
    long_line = ResponseMeter("openai", SSE)  # a closing event echoing huge instructions
    line = b'data: {"type": "response.completed", "x": "' + b"a" * (5 << 20) + b'"}\n\n'
    for i in range(0, len(line), 64 << 10):  # as the API sends it: in pieces
        long_line.feed(line[i : i + (64 << 10)])
    long_line.usage()
    assert long_line.unreadable
    plain = ResponseMeter("openai", SSE)
    plain.feed(_sse(CHUNK))
    plain.usage()
    assert not plain.unreadable and not plain.ended
