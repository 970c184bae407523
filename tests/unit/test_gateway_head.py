"""A head the gateway lets through has one reading: h11's framing and a lenient parser's agree.

Smuggling lives where two parsers read one request's length differently. The property
builds heads from the pieces such attacks are made of (framing names in any case, with
stray spaces, tabs, folds, repeated; values listed, signed, Latin-1; bare LF ends) and
checks: whatever :func:`head_fault` passes and h11 accepts, a lenient parser (names
trimmed and lower-cased, as many proxies read them) frames exactly as h11 does.
"""

from __future__ import annotations

import h11
from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.gateway.head import head_fault, parse_head

_NAMES = st.sampled_from(
    [
        "Content-Length",
        "content-length",
        "Content-Length ",
        "Transfer-Encoding",
        "transfer-encoding",
        "TRANSFER-ENCODING",
        " Transfer-Encoding",
        "Transfer_Encoding",
        "X-Note",
        "x-api-key",
    ]
)
_VALUES = st.sampled_from(
    ["chunked", " chunked", "chunked ", "Chunked", "identity", "gzip, chunked", "5", "05"]
    + ["5, 5", "+5", "5 ", "", "caf\xe9", "a\x01b", "\tchunked"]
)
_LINE = st.tuples(_NAMES, st.sampled_from([": ", ":", ":\t", " : "]), _VALUES)
_END = st.sampled_from(["\r\n", "\n", "\r\n"])


def _framing_by_h11(head: bytes) -> tuple[str, int] | None:
    """How h11 frames the body: ``("chunked", 0)`` or ``("length", n)``; ``None``: refused."""
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(head)
    try:
        event = conn.next_event()
    except h11.RemoteProtocolError:
        return None
    if not isinstance(event, h11.Request):
        return None
    names = {k.lower(): v for k, v in event.headers}
    if b"transfer-encoding" in names:
        return "chunked", 0
    return "length", int(names.get(b"content-length", b"0"))


def _framing_leniently(head: bytes) -> tuple[str, int] | None:
    """How a lenient proxy frames it: trimmed names, the first of each, TE before CL."""
    headers: dict[str, str] = {}
    for name, value in parse_head(head).headers:
        headers.setdefault(name.strip().lower(), value.strip())
    if "transfer-encoding" in headers:
        return "chunked", 0
    length = headers.get("content-length", "0")
    return ("length", int(length)) if length.isdigit() else None


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(st.tuples(_LINE, _END, st.booleans()), max_size=4))
def test_a_head_let_through_frames_one_way_only(
    lines: list[tuple[tuple[str, str, str], str, bool]],
) -> None:
    text = "POST /anthropic/v1/messages HTTP/1.1\r\nHost: gateway\r\n"
    for (name, colon, value), end, folded in lines:
        text += f"{name}{colon}{value}{end}" + (" chunked\r\n" if folded else "")
    head = (text + "\r\n").encode("latin-1")
    if head_fault(head):
        return
    by_h11 = _framing_by_h11(head)
    if by_h11 is None:
        return
    assert by_h11 == _framing_leniently(head), head
