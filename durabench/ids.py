"""The one id pattern: task ids, run ids and lane names, checked where they enter.

An id becomes a directory name (``runs/<run_id>/tasks/<task_id>/<lane>/``), part of a
Temporal workflow id (``run/<run_id>/task/<task_id>``) and part of a Docker container
name. Task authors and grading services choose some of them, so they are hostile input:
``../../x`` as a task id would write results outside ``runs/``, and ``-rf`` reads as an
option on a command line. One pattern for every kind of id keeps the rule easy to state.

It allows what real ids use: CodeScaleBench and Harbor task ids (``CCX-dep-trace-001``),
SWE-bench ids (``django__django-11099``), grading-service dataset ids (``q:1``), generated
run ids (``pytorch-20260101-120000-ab12``) and lane names (``sourcegraph_full``). It is one
path component by construction: no ``/``, backslash, whitespace, NUL or non-ASCII, never ``.``
or ``..``, and a first character that is a letter or digit (no hidden files, no options).
Docker names refuse ``:``, so container names map it injectively (see ``AttemptRef``).
"""

from __future__ import annotations

import re

from durabench.errors import ConfigError
from durabench.wording import counted

__all__ = ["ID_PATTERN", "MAX_ID_LENGTH", "check_id", "id_prefix"]

MAX_ID_LENGTH = 128
"""Longest id: well under a file name's 255 bytes, with room for the rest of a name."""

ID_PATTERN = rf"[A-Za-z0-9][A-Za-z0-9._:-]{{0,{MAX_ID_LENGTH - 1}}}"
"""Letters, digits, ``.``, ``_``, ``-`` and ``:``; a letter or digit first."""

_ID = re.compile(ID_PATTERN)
_ALLOWED = re.compile(r"[A-Za-z0-9._:-]")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9._:-]+")
_SHOWN = 60
"""Characters of a refused id quoted in the message."""

_RULE = (
    f"an id is 1 to {MAX_ID_LENGTH} letters, digits, '.', '_', '-' or ':', "
    "starting with a letter or digit"
)
"""The pattern in words, for messages."""


def _problem(value: str) -> str:
    """What is wrong with ``value``, in a few words."""
    if not value:
        return "it is empty"
    if len(value) > MAX_ID_LENGTH:
        return f"it has {counted(len(value), 'character')}"
    bad = next((c for c in value if not _ALLOWED.fullmatch(c)), None)
    if bad is not None:
        return f"it contains {bad!r}"
    return f"it starts with {value[0]!r}"


def check_id(value: str, what: str) -> str:
    """Return ``value`` if it is a valid id, else refuse it.

    Args:
        value: the id as given.
        what: what it is and where it came from, for the message (``"task id"``,
            ``"selection file x.json: task id"``).

    Raises:
        ConfigError: ``value`` does not match :data:`ID_PATTERN`; the message says what is
            wrong with it, the rule, and to rename it.
    """
    if _ID.fullmatch(value):
        return value
    shown = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
    raise ConfigError(
        f"{what} {shown!r} is not a valid id ({_problem(value)}): {_RULE}. Ids name "
        "directories and containers, so rename it"
    )


def id_prefix(text: str, fallback: str, max_length: int = 64) -> str:
    """Free text (a file name, a dataset name) made into the start of an id.

    Characters an id cannot hold become ``-`` and a leading one that cannot start it is
    dropped; nothing left gives ``fallback``. Used where durabench makes an id itself, as
    for a run id ``<suite>-<time>-<hex>``, so a file called ``my tasks.json`` still works.
    """
    prefix = _NOT_ALLOWED.sub("-", text)[:max_length].lstrip("._:-")
    return prefix or fallback
