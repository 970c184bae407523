"""The workspace diff an agent leaves: a unified patch between two file snapshots.

Computed on the host from snapshots taken before and after the agent, so it needs
nothing in the task image (no git, no diff).
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

__all__ = ["WorkspaceDiff", "diff_snapshots"]

_SKIP_DIRS = frozenset({".git", "__pycache__"})
"""Directories whose changes are tooling noise, not the agent's work."""


def _skipped(path: str) -> bool:
    return not _SKIP_DIRS.isdisjoint(path.split("/")[:-1])


class WorkspaceDiff(NamedTuple):
    """A patch and the files it touches."""

    patch: str
    files_changed: tuple[str, ...]


def _lines(data: bytes | None) -> list[str] | None:
    if data is None:
        return []
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def diff_snapshots(before: dict[str, bytes], after: dict[str, bytes]) -> WorkspaceDiff:
    """The unified diff from ``before`` to ``after`` (paths relative to the workspace)."""
    chunks: list[str] = []
    changed: list[str] = []
    for path in sorted(before.keys() | after.keys()):
        if _skipped(path) or before.get(path) == after.get(path):
            continue
        changed.append(path)
        old, new = _lines(before.get(path)), _lines(after.get(path))
        if old is None or new is None:
            chunks.append(f"Binary files a/{path} and b/{path} differ\n")
            continue
        fromfile = f"a/{path}" if path in before else "/dev/null"
        tofile = f"b/{path}" if path in after else "/dev/null"
        for line in difflib.unified_diff(old, new, fromfile, tofile):
            chunks.append(
                line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            )
    return WorkspaceDiff("".join(chunks), tuple(changed))
