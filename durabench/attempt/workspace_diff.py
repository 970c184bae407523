"""The workspace diff an agent leaves: a unified patch between two file snapshots.

Computed on the host from snapshots taken before and after the agent, so it needs
nothing in the task image (no git, no diff).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import NamedTuple

from durabench.wording import counted

__all__ = ["MAX_PATCH_CHARS", "WorkspaceDiff", "diff_snapshots"]

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


MAX_PATCH_CHARS = 16 << 20
"""Past this the patch names the files it leaves out: the files are the agent's to make
(a thousand 1 MiB files of short lines would make a patch tens of times their size)."""


def diff_snapshots(
    before: dict[str, bytes], after: dict[str, bytes], *, max_chars: int = MAX_PATCH_CHARS
) -> WorkspaceDiff:
    """The unified diff from ``before`` to ``after`` (paths relative to the workspace).

    Every changed file is counted; the patch stops growing at ``max_chars`` and ends with
    a line naming how many changed files it leaves out.
    """
    chunks: list[str] = []
    changed: list[str] = []
    size = 0
    for path in sorted(before.keys() | after.keys()):
        if _skipped(path) or before.get(path) == after.get(path):
            continue
        changed.append(path)
        if size >= max_chars:
            continue
        for chunk in _file_diff(path, before.get(path), after.get(path)):
            chunks.append(chunk)
            size += len(chunk)
            if size >= max_chars:
                break
    patch = "".join(chunks)
    if size >= max_chars:
        patch += (
            f"# durabench: the patch stops at {counted(max_chars, 'character')}; "
            f"{counted(len(changed), 'file')} changed\n"
        )
    return WorkspaceDiff(patch, tuple(changed))


_GIT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v"}
_GIT_ESCAPES |= {"\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _control(ch: str) -> bool:
    return ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F


def _quoted(name: str) -> str:
    """``name`` as git writes it in a patch: C-quoted when it holds a control or a quote.

    The agent names its files: a newline would forge a patch line, an escape sequence
    would act on the terminal of whoever reads the patch.
    """
    if not any(_control(ch) or ch in '"\\' for ch in name):
        return name
    out = "".join(
        _GIT_ESCAPES.get(ch) or ("".join(f"\\{b:03o}" for b in ch.encode()) if _control(ch) else ch)
        for ch in name
    )
    return f'"{out}"'


def _file_diff(path: str, before: bytes | None, after: bytes | None) -> Iterator[str]:
    old, new = _lines(before), _lines(after)
    if old is None or new is None:
        yield f"Binary files {_quoted(f'a/{path}')} and {_quoted(f'b/{path}')} differ\n"
        return
    fromfile = _quoted(f"a/{path}") if before is not None else "/dev/null"
    tofile = _quoted(f"b/{path}") if after is not None else "/dev/null"
    for line in difflib.unified_diff(old, new, fromfile, tofile):
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
