"""The version of the agent CLI that ran: from its transcript, else from ``<cli> --version``.

Both are the sandbox's words, so both are hostile input: read capped, and only a plain
version token is kept (``2.1.332``, ``0.169.0``, ``1.0.0-beta.2``); anything else is no
version at all, never a string that reaches a report as it was printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["VERSION_OUTPUT_BYTES", "is_plain_version", "plain_version", "transcript_version"]

VERSION_OUTPUT_BYTES = 4096
"""Bytes of ``--version`` output read: a version is a line, not a file."""
_MAX_CHARS = 40
"""The longest version kept; a longer token is no version."""
_TOKEN = re.compile(r"(?<![0-9.])v?([0-9]+(?:\.[0-9]+){1,3}(?:[-+][0-9A-Za-z.-]+)?)")
"""A dotted version, optionally ``v``-prefixed and with a pre-release or build suffix."""
_VERSION_KEYS = ("claude_code_version",)
"""Keys an init event names its CLI's version under (Claude Code's; Codex and Gemini
print none, so their version comes from ``--version``)."""


_PLAIN_VERSION = re.compile(r"[0-9]+(\.[0-9]+){0,3}([-+][0-9A-Za-z.-]+)?")
"""A version npm installs from its registry (``2.1.332``, ``1.0.0-beta.2``): never a URL,
a path, a git spec or a tag such as ``latest``, which npm would fetch from anywhere or
resolve anew (a cached install is keyed by the spec, so a tag would stay stale)."""


def is_plain_version(version: str) -> bool:
    """Whether ``version`` names one release for good (see :data:`_PLAIN_VERSION`)."""
    return _PLAIN_VERSION.fullmatch(version) is not None


def plain_version(text: str) -> str | None:
    """The first plain version token in ``text``'s first bytes, or ``None``.

    ``2.1.332 (Claude Code)`` gives ``2.1.332``, ``codex-cli 0.169.0`` gives ``0.169.0``.
    """
    match = _TOKEN.search(text[:VERSION_OUTPUT_BYTES])
    if match is None or len(match.group(1)) > _MAX_CHARS:
        return None
    return match.group(1)


def transcript_version(events: Iterable[Mapping[str, object]]) -> str | None:
    """The CLI version the transcript's first init event reports, if a plain one."""
    for event in events:
        if event.get("type") == "system" and event.get("subtype") == "init":
            for key in _VERSION_KEYS:
                value = event.get(key)
                if isinstance(value, str):
                    found = plain_version(value)
                    return found if found == value.strip().removeprefix("v") else None
            return None
    return None
