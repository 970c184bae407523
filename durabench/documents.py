"""TOML and JSON parsed with a depth limit: a file nested too deep is a parse error.

``tomllib`` and ``json`` recurse once per level of nesting, so a task.toml, config.toml or
selection file of a few thousand ``[`` raises ``RecursionError``, which no reader expects
and which prints as a traceback. No real durabench file nests more than a handful of
levels; here anything past :data:`MAX_DEPTH` fails as the format's own decode error (a
``ValueError``), so each reader's one-line message for a file that is not TOML or not JSON
covers it too. Every TOML and JSON durabench reads is parsed here
(``tests/unit/test_deep_files.py`` holds it).
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

__all__ = ["MAX_DEPTH", "loads_json", "loads_toml"]

MAX_DEPTH = 64
"""The deepest nesting read: far past any real file, far short of Python's recursion limit."""

_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep; no durabench file nests like that"


def _depth_over(doc: Any) -> bool:
    """Whether ``doc`` nests lists and dicts past :data:`MAX_DEPTH` (walked without recursion)."""
    todo: list[tuple[Any, int]] = [(doc, 0)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            if depth >= MAX_DEPTH:
                return True
            todo.extend((item, depth + 1) for item in value)
    return False


def loads_toml(text: str) -> dict[str, Any]:
    """``text`` parsed as TOML.

    Raises:
        tomllib.TOMLDecodeError: not TOML, or nested past :data:`MAX_DEPTH`.
    """
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(_TOO_DEEP) from None
    if _depth_over(doc):
        raise tomllib.TOMLDecodeError(_TOO_DEEP)
    return doc


def loads_json(text: str | bytes) -> Any:
    """``text`` parsed as JSON.

    Raises:
        json.JSONDecodeError: not JSON, or nested past :data:`MAX_DEPTH`.
        UnicodeDecodeError: ``text`` is bytes that are not UTF-8 (nor UTF-16/32).
    """
    try:
        doc = json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(_TOO_DEEP, "", 0) from None
    if _depth_over(doc):
        raise json.JSONDecodeError(_TOO_DEEP, "", 0)
    return doc
