"""Counts and numbers in the words people read: "1 file", "2 files", "0.67", never "0.666667".

Every count beside a noun in user-facing text goes through :func:`counted`, and every
fraction shown to a person through :func:`rounded`, so a test can enumerate them.
"""

from __future__ import annotations

__all__ = ["counted", "rounded"]

_IRREGULAR = {"was": "were", "is": "are", "has": "have", "this": "these"}


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one: ``counted(1, "file") == "1 file"``.

    Thousands are grouped: ``counted(20000, "character") == "20,000 characters"``.

    ``plural``: the plural where English spelling rules give the wrong one.
    """
    if n == 1:
        return f"{n} {noun}"
    return f"{n:,} {plural if plural is not None else _plural(noun)}"


def _plural(noun: str) -> str:
    """English spelling: ``retry`` → ``retries``, ``sandbox`` → ``sandboxes``, else ``+s``."""
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return f"{noun}es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{noun[:-1]}ies"
    return f"{noun}s"


def rounded(x: float, digits: int = 2) -> str:
    """``x`` for a person: at most ``digits`` decimals, trailing zeros dropped (``0.67``, ``2``)."""
    text = f"{x:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
