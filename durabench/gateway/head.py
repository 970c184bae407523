"""A request's head as the agent sent it, byte for byte: refused when it is ambiguous.

h11 parses the gateway's HTTP/1.1 and refuses most malformed requests (two differing
``Content-Length`` values, a ``Transfer-Encoding`` other than ``chunked``, a space
before a colon). Some it accepts by choosing a reading: both ``Content-Length`` and
``Transfer-Encoding`` (it frames by the latter), equal ``Content-Length`` repeated or
listed (collapsed), folded lines (unfolded), bare LF line ends, bytes outside ASCII. Each
is a way to make two parsers disagree on where a request ends, and no coding CLI sends
any of them, so the gateway refuses them all before h11 reads the head
(:func:`head_fault`), and ledgers the refusal against the attempt whose key the head
carries (:func:`parse_head`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from durabench.numerals import read_int

__all__ = ["END_OF_HEAD", "RawHead", "head_fault", "parse_head"]

END_OF_HEAD = re.compile(rb"\n\r?\n")
"""Where a head ends, as h11 finds it."""
_OUTSIDE = re.compile(rb"[^\t\r\n\x20-\x7e]")
"""A byte no head of a coding CLI holds: a control byte, DEL, or anything past ASCII."""
_FRAMING = (b"content-length", b"transfer-encoding")


class RawHead(NamedTuple):
    """A head's request line and headers, read leniently (names lower case, Latin-1)."""

    method: str
    target: str
    headers: list[tuple[str, str]]


def head_fault(head: bytes) -> str:
    """What makes ``head`` (through its blank line) ambiguous, or ``""`` when nothing does."""
    if _OUTSIDE.search(head):
        return "a control byte or a byte outside ASCII in its head"
    if head.count(b"\n") != head.count(b"\r\n") or head.count(b"\r") != head.count(b"\r\n"):
        return "a line not ended by CRLF"
    lines = head.split(b"\r\n")
    if any(line[:1] in (b" ", b"\t") for line in lines[1:]):
        return "a folded header line (obs-fold)"
    framing: dict[bytes, list[bytes]] = {name: [] for name in _FRAMING}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if line and name != name.strip():
            return "a space in a header name"
        if name.lower() in framing:
            framing[name.lower()].append(value.strip())
    lengths, codings = framing[b"content-length"], framing[b"transfer-encoding"]
    if lengths and codings:
        return "both Content-Length and Transfer-Encoding"
    if len(lengths) > 1 or len(codings) > 1:
        return "a framing header repeated"
    if lengths and read_int(lengths[0].decode("latin-1")) is None:
        return "a Content-Length that is not one number"
    if codings and codings[0].lower() != b"chunked":
        return "a Transfer-Encoding other than chunked"
    if codings and not lines[0].endswith(b" HTTP/1.1"):
        return "Transfer-Encoding outside HTTP/1.1"
    return ""


def parse_head(head: bytes) -> RawHead:
    """The request line and headers of ``head``, for finding whose request it was."""
    lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
    method, _, rest = lines[0].partition(" ")
    target = rest.rpartition(" ")[0] or rest
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon and line[:1] not in (" ", "\t"):
            headers.append((name.strip().lower(), value.strip()))
    return RawHead(method, target, headers)
