"""Whatever body an agent sends, what the gateway reads of it raises nothing but a refusal.

The family of defect 5 (a body nested 200k deep was a 500 with no ledger line): every
reader of the body (its parse, the model it asks for, its worst case, the usage option
forced on a stream) gets arbitrary bytes and arbitrary JSON in the shapes it looks at, and
may only answer, or refuse the body as too large.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.gateway.budget import worst_case
from durabench.gateway.request import AgentRequest, BodyTooLarge, parse_document

_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
_KEYS = st.sampled_from(
    [
        "model",
        "max_tokens",
        "max_output_tokens",
        "n",
        "stream",
        "stream_options",
        "tools",
        "mcp_servers",
        "generationConfig",
        "messages",
    ]
)
_TOOL = st.fixed_dictionaries(
    {}, optional={"type": _JSON | st.text(max_size=20), "max_uses": _JSON}
)
_DOC = st.dictionaries(_KEYS, _JSON | st.lists(_TOOL, max_size=3), max_size=6)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200) | _DOC.map(lambda d: json.dumps(d).encode()))
def test_parsing_any_body_answers_or_refuses(data: bytes) -> None:
    try:
        doc = parse_document(data)
    except BodyTooLarge:
        return
    assert isinstance(doc, dict)


@pytest.mark.parametrize(
    "path", ["/v1/messages", "/v1/chat/completions", "/v1beta/models/m:generateContent"]
)
@settings(max_examples=150, deadline=None)
@given(doc=_DOC)
def test_reading_any_document_raises_nothing(path: str, doc: dict[str, Any]) -> None:
    for provider in ("anthropic", "openai", "gemini"):
        req = AgentRequest(provider, path, "POST", {}, [])  # type: ignore[arg-type]
        req.body, req.doc = bytearray(json.dumps(doc).encode()), dict(doc)
        assert isinstance(req.asked_model(), str)
        assert worst_case(provider, req.doc, len(req.body)) >= 0  # type: ignore[arg-type]
        req.force_usage()


def test_a_body_nested_deeper_than_the_parser_goes_is_refused_as_too_large() -> None:
    with pytest.raises(BodyTooLarge):
        parse_document(b"[" * 200_000 + b"]" * 200_000)
