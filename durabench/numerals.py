"""Whole numbers read from text another program wrote: ASCII digits, and not too many.

``str.isdigit`` is true of ``²`` (which ``int`` refuses) and ``١`` (which ``int`` reads as
1), and ``int`` refuses a number of thousands of digits: text from a sandbox, a service, a
header or a URL read that way crashes the reader, or means something else than it shows.
Every such number is read here; anything else is ``None``.
"""

from __future__ import annotations

import re

__all__ = ["read_int"]

_UNSIGNED = re.compile(r"[0-9]{1,18}", re.ASCII)
_SIGNED = re.compile(r"-?[0-9]{1,18}", re.ASCII)


def read_int(text: str, *, signed: bool = False) -> int | None:
    """``text`` as a whole number of at most 18 ASCII digits (a ``-`` first if ``signed``)."""
    found = (_SIGNED if signed else _UNSIGNED).fullmatch(text)
    return int(found.group(0)) if found else None
