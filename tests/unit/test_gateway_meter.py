"""The meter of record on every response shape of the three APIs, whole and in pieces.

Each body below is shaped as the API documents and sends it (streamed and not, with
cache reads and writes, thinking tokens, errors, and no usage at all); each is fed to the
meter whole, one byte at a time and in odd-sized chunks, and must read the same. Every
figure differs from every other in a body, so a field read from the wrong place shows.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from durabench.gateway import ResponseMeter, ResponseUsage
from durabench.gateway.meter import MAX_JSON_BYTES

SSE = "text/event-stream"
JSON = "application/json"


def _sse(*events: dict[str, Any]) -> bytes:
    """Server-sent events as the APIs send them: an ``event:`` line where they name one."""
    out = []
    for event in events:
        kind = event.get("type")
        out.append((f"event: {kind}\n" if kind else "") + f"data: {json.dumps(event)}\n\n")
    return "".join(out).encode()


def _read(provider: str, content_type: str, body: bytes, step: int) -> ResponseUsage:
    meter = ResponseMeter(provider, content_type)  # type: ignore[arg-type]
    for start in range(0, len(body), step):
        meter.feed(body[start : start + step])
    return meter.usage()


ANTHROPIC_STREAM = _sse(
    {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [],
            "usage": {
                "input_tokens": 11,
                "cache_creation_input_tokens": 2048,
                "cache_read_input_tokens": 7000,
                "output_tokens": 1,
            },
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
    {"type": "ping"},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "é"}},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn"},
        "usage": {"output_tokens": 333},
    },
    {"type": "message_stop"},
)
ANTHROPIC_JSON = json.dumps(
    {
        "id": "msg_02",
        "type": "message",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "ok"}],
        "usage": {
            "input_tokens": 21,
            "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 4000,
            "output_tokens": 55,
        },
    }
).encode()
ANTHROPIC_STREAM_ERROR = _sse(
    {
        "type": "message_start",
        "message": {"model": "claude-haiku-4-5", "usage": {"input_tokens": 5, "output_tokens": 1}},
    },
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
)
ANTHROPIC_429 = json.dumps(
    {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
).encode()

OPENAI_RESPONSES_STREAM = _sse(
    {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-5-codex"}},
    {"type": "response.output_text.delta", "delta": "ok"},
    {
        "type": "response.completed",
        "response": {
            "id": "resp_1",
            "model": "gpt-5-codex-2025-09-15",
            "usage": {
                "input_tokens": 9000,
                "input_tokens_details": {"cached_tokens": 6000},
                "output_tokens": 420,
                "output_tokens_details": {"reasoning_tokens": 400},
                "total_tokens": 9420,
            },
        },
    },
)
OPENAI_RESPONSES_JSON = json.dumps(
    {
        "id": "resp_2",
        "object": "response",
        "model": "gpt-5",
        "usage": {
            "input_tokens": 800,
            "input_tokens_details": {"cached_tokens": 128},
            "output_tokens": 64,
            "total_tokens": 864,
        },
    }
).encode()
OPENAI_CHAT_JSON = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4.1",
        "usage": {
            "prompt_tokens": 700,
            "prompt_tokens_details": {"cached_tokens": 512},
            "completion_tokens": 90,
            "total_tokens": 790,
        },
    }
).encode()
OPENAI_CHAT_STREAM = (
    _sse(
        {"id": "c", "model": "gpt-4.1", "choices": [{"delta": {"content": "o"}}], "usage": None},
        {
            "id": "c",
            "model": "gpt-4.1",
            "choices": [],
            "usage": {"prompt_tokens": 50, "completion_tokens": 6, "total_tokens": 56},
        },
    )
    + b"data: [DONE]\n\n"
)
OPENAI_FAILED_STREAM = _sse(
    {
        "type": "response.failed",
        "response": {
            "model": "gpt-5-codex",
            "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached"},
        },
    }
)
OPENAI_429 = json.dumps(
    {"error": {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"}}
).encode()

GEMINI_CHUNKS = [
    {
        "candidates": [{"content": {"parts": [{"text": "a"}]}}],
        "usageMetadata": {"promptTokenCount": 5000, "cachedContentTokenCount": 4096},
        "modelVersion": "gemini-2.5-pro",
    },
    {
        "candidates": [{"content": {"parts": [{"text": "b"}]}, "finishReason": "STOP"}],
        "usageMetadata": {
            "promptTokenCount": 5000,
            "cachedContentTokenCount": 4096,
            "candidatesTokenCount": 77,
            "thoughtsTokenCount": 900,
            "totalTokenCount": 5977,
        },
        "modelVersion": "gemini-2.5-pro",
    },
]
GEMINI_SSE = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in GEMINI_CHUNKS)
GEMINI_ARRAY = json.dumps(GEMINI_CHUNKS, indent=1).encode()  # streamGenerateContent, no alt=sse
GEMINI_429 = json.dumps(
    {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}}
).encode()


def _u(model: str = "", **fields: Any) -> ResponseUsage:
    return ResponseUsage(model=model, **fields)


CASES = {
    "anthropic stream, cache read and write": (
        "anthropic",
        SSE,
        ANTHROPIC_STREAM,
        _u("claude-sonnet-4-5-20250929", input=11, output=333, cache_read=7000, cache_write=2048),
    ),
    "anthropic message": (
        "anthropic",
        JSON,
        ANTHROPIC_JSON,
        _u("claude-haiku-4-5", input=21, output=55, cache_read=4000, cache_write=300),
    ),
    "anthropic stream ending in an error event": (
        "anthropic",
        SSE,
        ANTHROPIC_STREAM_ERROR,
        _u("claude-haiku-4-5", input=5, output=1, error="overloaded_error"),
    ),
    "anthropic 429 body": ("anthropic", JSON, ANTHROPIC_429, _u(error="rate_limit_error")),
    "openai responses stream, cached and reasoning": (
        "openai",
        SSE,
        OPENAI_RESPONSES_STREAM,
        _u("gpt-5-codex-2025-09-15", input=3000, output=420, cache_read=6000),
    ),
    "openai response": (
        "openai",
        JSON,
        OPENAI_RESPONSES_JSON,
        _u("gpt-5", input=672, output=64, cache_read=128),
    ),
    "openai chat completion": (
        "openai",
        JSON,
        OPENAI_CHAT_JSON,
        _u("gpt-4.1", input=188, output=90, cache_read=512),
    ),
    "openai chat stream with its usage chunk": (
        "openai",
        SSE,
        OPENAI_CHAT_STREAM,
        _u("gpt-4.1", input=50, output=6),
    ),
    "openai failed stream": (
        "openai",
        SSE,
        OPENAI_FAILED_STREAM,
        _u("gpt-5-codex", error="rate_limit_exceeded"),
    ),
    "openai 429 body": ("openai", JSON, OPENAI_429, _u(error="insufficient_quota")),
    "gemini sse, cached and thinking": (
        "gemini",
        SSE,
        GEMINI_SSE,
        _u("gemini-2.5-pro", input=904, output=977, cache_read=4096),
    ),
    "gemini json array": (
        "gemini",
        JSON,
        GEMINI_ARRAY,
        _u("gemini-2.5-pro", input=904, output=977, cache_read=4096),
    ),
    "gemini 429 body": ("gemini", JSON, GEMINI_429, _u(error="RESOURCE_EXHAUSTED")),
    "anthropic body without usage": (
        "anthropic",
        JSON,
        b'{"type": "message", "model": "claude-haiku-4-5", "content": []}',
        _u("claude-haiku-4-5"),
    ),
    "openai stream without usage": (
        "openai",
        SSE,
        _sse({"id": "c", "model": "gpt-4.1", "choices": [{"delta": {"content": "o"}}]}),
        _u("gpt-4.1"),
    ),
    "a body that is no json": ("gemini", JSON, b"<html>bad gateway</html>", _u()),
}


@pytest.mark.parametrize("step", [1, 7, 1 << 20])
@pytest.mark.parametrize("case", list(CASES))
def test_every_response_shape_reads_the_same_whole_or_in_pieces(case: str, step: int) -> None:
    provider, content_type, body, expected = CASES[case]
    assert _read(provider, content_type, body, step) == expected


def test_an_event_line_split_across_chunks_is_joined_not_dropped() -> None:
    meter = ResponseMeter("anthropic", SSE)
    line = ANTHROPIC_STREAM.index(b'data: {"type": "message_delta"')
    meter.feed(ANTHROPIC_STREAM[: line + 40])  # the usage line cut in two
    meter.feed(ANTHROPIC_STREAM[line + 40 :])
    assert meter.usage().output == 333


def test_a_json_body_past_the_limit_is_passed_on_unread() -> None:
    meter = ResponseMeter("anthropic", JSON)
    meter.feed(ANTHROPIC_JSON[:-1] + b" " * MAX_JSON_BYTES)
    meter.feed(b"}")
    assert meter.usage() == ResponseUsage()


def test_a_cut_stream_keeps_what_came_and_a_final_line_without_newline_counts() -> None:
    whole = _read("anthropic", SSE, ANTHROPIC_STREAM.rstrip(b"\n"), 5)
    assert whole.output == 333  # the last line lacked its newline: read at the end
    cut = ANTHROPIC_STREAM[: ANTHROPIC_STREAM.index(b"event: message_delta")]
    assert _read("anthropic", SSE, cut, 3) == _u(
        "claude-sonnet-4-5-20250929", input=11, output=1, cache_read=7000, cache_write=2048
    )
