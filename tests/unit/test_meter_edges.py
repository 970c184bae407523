"""The meter of record at its edges: which error field names an error, counts an API left
out, fields of the wrong type, the body and line limits, and SSE's optional space.

The meter reads what an untrusted upstream sent: a field of the wrong type must be ignored,
never raise (a raise would lose the whole response's usage), and a count the API left out
is zero, not a guess.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from durabench.gateway import ResponseMeter, ResponseUsage
from durabench.gateway.meter import _MAX_LINE, MAX_JSON_BYTES

SSE = "text/event-stream"
JSON = "application/json"


def _whole(provider: str, *docs: dict[str, Any]) -> ResponseUsage:
    """Each doc sent as one server-sent event, the stream fed whole."""
    meter = ResponseMeter(provider, SSE)  # type: ignore[arg-type]
    meter.feed(b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in docs))
    return meter.usage()


def _body(provider: str, doc: Any) -> ResponseUsage:
    meter = ResponseMeter(provider, JSON)  # type: ignore[arg-type]
    meter.feed(json.dumps(doc).encode())
    return meter.usage()


@pytest.mark.parametrize(
    ("provider", "error", "named"),
    [
        # OpenAI sends both: the type is the kind of error, the code a detail of it
        (
            "openai",
            {"type": "invalid_request_error", "code": "context_length_exceeded"},
            "invalid_request_error",
        ),
        ("openai", {"code": "server_error", "message": "x"}, "server_error"),
        ("openai", {"message": "no type, no code"}, ""),
        ("gemini", {"status": "UNAVAILABLE", "code": 503}, "UNAVAILABLE"),
        ("gemini", {"code": 429, "message": "no status"}, "429"),
        ("gemini", {"message": "no status, no code"}, ""),
        ("anthropic", {"message": "no type"}, ""),
    ],
)
def test_an_error_is_named_by_its_type_then_its_code_else_not_at_all(
    provider: str, error: dict[str, Any], named: str
) -> None:
    assert _body(provider, {"error": error}).error == named


@pytest.mark.parametrize(
    ("provider", "usage", "expected"),
    [
        ("gemini", {"promptTokenCount": 300}, ResponseUsage(input=300)),
        ("gemini", {"candidatesTokenCount": 40}, ResponseUsage(output=40)),
        ("gemini", {"thoughtsTokenCount": 9}, ResponseUsage(output=9)),
        (
            "gemini",
            {"promptTokenCount": 500, "cachedContentTokenCount": 500, "candidatesTokenCount": 3},
            ResponseUsage(input=0, output=3, cache_read=500),
        ),
        ("openai", {"output_tokens": 12}, ResponseUsage(output=12)),
        (
            "openai",
            {"input_tokens": 64, "input_tokens_details": {"cached_tokens": 64}},
            ResponseUsage(input=0, cache_read=64),
        ),
    ],
)
def test_a_count_the_api_left_out_is_zero(
    provider: str, usage: dict[str, Any], expected: ResponseUsage
) -> None:
    key = "usageMetadata" if provider == "gemini" else "usage"
    assert _body(provider, {key: usage}) == expected


@pytest.mark.parametrize(
    ("provider", "doc", "expected"),
    [
        ("anthropic", {"type": "error", "error": "overloaded"}, ResponseUsage()),
        ("anthropic", {"model": "m", "usage": [1]}, ResponseUsage(model="m")),
        (
            "anthropic",
            {"usage": {"input_tokens": -5, "output_tokens": True, "cache_read_input_tokens": 2}},
            ResponseUsage(cache_read=2),
        ),
        ("openai", {"error": "rate limited", "model": 5}, ResponseUsage()),
        (
            "openai",
            {"usage": {"input_tokens": 10, "input_tokens_details": "x", "output_tokens": 1}},
            ResponseUsage(input=10, output=1),
        ),
        ("gemini", {"error": "unavailable", "modelVersion": 5}, ResponseUsage()),
    ],
)
def test_a_field_of_the_wrong_type_is_ignored_not_raised_on(
    provider: str, doc: dict[str, Any], expected: ResponseUsage
) -> None:
    assert _body(provider, doc) == expected


def test_the_last_report_of_a_count_stands_zero_included() -> None:
    """message_delta's counts are cumulative, so the last one is the total, even zero."""
    usage = _whole(
        "anthropic",
        {"type": "message_start", "message": {"usage": {"input_tokens": 11, "output_tokens": 1}}},
        {"type": "message_delta", "usage": {"input_tokens": 0, "output_tokens": 40}},
    )
    assert usage == ResponseUsage(input=0, output=40)


def test_an_empty_model_does_not_erase_the_one_an_earlier_event_named() -> None:
    usage = _whole("gemini", {"modelVersion": "gemini-2.5-pro"}, {"modelVersion": ""})
    assert usage.model == "gemini-2.5-pro"


def test_a_data_line_without_the_optional_space_is_read() -> None:
    meter = ResponseMeter("anthropic", SSE)
    meter.feed(
        b'event: message_delta\ndata:{"type":"message_delta","usage":{"output_tokens":7}}\n\n'
    )
    assert meter.usage().output == 7


def test_a_last_usage_line_without_its_newline_is_read_at_the_end() -> None:
    meter = ResponseMeter("openai", SSE)
    meter.feed(b'data: {"model":"gpt-4.1","usage":{"prompt_tokens":5,"completion_tokens":6}}')
    assert meter.usage() == ResponseUsage(model="gpt-4.1", input=5, output=6)


def _padded(doc: dict[str, Any], size: int, prefix: bytes = b"") -> bytes:
    """``prefix`` and the doc's JSON, padded with spaces to exactly ``size`` bytes."""
    data = prefix + json.dumps(doc).encode()
    return data + b" " * (size - len(data))


USAGE = {"usage": {"input_tokens": 3, "output_tokens": 4}}


def test_a_json_body_of_exactly_the_limit_is_read() -> None:
    meter = ResponseMeter("anthropic", JSON)
    meter.feed(_padded(USAGE, MAX_JSON_BYTES))
    assert meter.usage() == ResponseUsage(input=3, output=4)


def test_past_the_limit_nothing_more_is_read_even_a_whole_json_chunk() -> None:
    meter = ResponseMeter("anthropic", JSON)
    meter.feed(b" " * (MAX_JSON_BYTES + 1))
    meter.feed(json.dumps(USAGE).encode())
    assert meter.usage() == ResponseUsage()


def test_an_event_line_of_exactly_the_line_limit_is_read_one_byte_more_is_not() -> None:
    meter = ResponseMeter("anthropic", SSE)
    meter.feed(_padded(USAGE, _MAX_LINE, b"data: "))
    meter.feed(b"\n\n")
    assert meter.usage() == ResponseUsage(input=3, output=4)
    meter = ResponseMeter("anthropic", SSE)
    meter.feed(_padded(USAGE, _MAX_LINE + 1, b"data: "))
    meter.feed(b"\n\n")
    assert meter.usage() == ResponseUsage()
