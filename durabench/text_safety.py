"""Text that an agent, a task or a service wrote, made safe to show: it is data, never markup.

A final message, a reason, a build error or a file name can hold anything: terminal escape
sequences (clear the screen, set the window title), Markdown structure (a ``#`` headline, a
forged ``|`` table), raw HTML (``<script>``) or a spreadsheet formula. Every report and
command puts such text through one of these functions, so what it shows is what was
written, and nothing it shows acts.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["csv_cell", "md_code", "md_escape", "one_line", "visible_controls"]

_CONTROLS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069\ufeff]"
)
"""C0 and C1 controls (but tab, LF, CR), DEL, and the invisible format characters a
terminal or a reader would act on or hide (bidi overrides, zero-width, line separators)."""

_LINE_BREAKS = re.compile("[\t\n\r]")


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _shown(match: re.Match[str]) -> str:
    if match.group() in _NAMED:
        return _NAMED[match.group()]
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """``text`` with each control character written out as an escape; tab, LF and CR kept."""
    return _CONTROLS.sub(_shown, text)


def one_line(text: str) -> str:
    """``text`` on one line: controls written out, and tab, LF and CR too."""
    return _LINE_BREAKS.sub(_shown, visible_controls(text))


_MD_SPECIAL = re.compile(r"([\\`*\[\]#|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_escape(text: str) -> str:
    """``text`` as inert Markdown on one line: no headline, table, link, code or HTML.

    Markdown's structure characters get a backslash, ``&``, ``<`` and ``>`` become
    entities, and line breaks and controls are written out, so a multi-line message stays
    in its list item or table cell.
    """
    escaped = _MD_SPECIAL.sub(r"\\\1", text)
    escaped = "".join(_HTML.get(ch, ch) for ch in escaped)
    return one_line(escaped)


def md_code(text: str) -> str:
    """``text`` as a Markdown code span: a backtick inside cannot close it early."""
    inner = one_line(text)
    longest = max((len(run) for run in re.findall("`+", inner)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if inner.startswith("`") or inner.endswith("`") else ""
    return f"{fence}{pad}{inner}{pad}{fence}"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A spreadsheet reads a cell beginning with one of these as a formula (OWASP)."""


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text; numbers stay numbers.

    A string that could start a formula is prefixed with ``'`` (the OWASP CSV-injection
    advice).
    """
    if not isinstance(value, str):
        return value
    shown = visible_controls(value).replace("\r", "\\r")  # a lone CR would split the row
    return "'" + shown if value.startswith(_FORMULA_START) else shown
