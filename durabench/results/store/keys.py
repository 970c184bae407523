"""Which object keys of a run's prefix durabench reads, and which no file can be kept at.

Anyone who can write to the bucket can plant a key; these rules are pure, so a reader
decides what to skip before it touches the local file system.
"""

from __future__ import annotations

from collections.abc import Callable

from durabench.settings.paths import attempt_number

__all__ = ["NAME_MAX", "indexed_run", "unkeepable"]

NAME_MAX = 255
"""The longest file name, in bytes, that common file systems (ext4, xfs, APFS) take."""


def indexed_run(relative: str) -> str | None:
    """The run id of a ``<run>/plan.json`` or attempt ``result.json`` key, else ``None``."""
    parts = relative.split("/")
    if len(parts) == 2 and parts[1] == "plan.json":
        return parts[0]
    if (
        len(parts) == 6
        and parts[1] == "tasks"
        and attempt_number(parts[4]) is not None
        and parts[5] == "result.json"
    ):
        return parts[0]
    return None


def _directory_position(parts: list[str]) -> bool:
    """Whether a run keeps a directory at ``parts``: ``tasks`` and its task, lane, attempt."""
    return parts[0] == "tasks" and len(parts) <= 4


def unkeepable(relative: str, is_object: Callable[[str], bool]) -> str | None:
    """Why no file can be kept at ``relative`` (a key's name inside its run), or ``None``.

    ``is_object`` says whether a name in the run is an object. S3 holds ``a`` and ``a/b``
    at once; a file system does not. Where the run keeps a directory (``tasks/...`` down to the
    attempt), an object is skipped; anywhere else the objects under one are.
    """
    parts = relative.split("/")
    if any(len(part.encode()) > NAME_MAX for part in parts):
        return f"a name in it is longer than {NAME_MAX} bytes"
    if _directory_position(parts):
        return "the run keeps a directory there"
    for depth in range(1, len(parts)):
        above = parts[:depth]
        if is_object("/".join(above)) and not _directory_position(above):
            return f"it lies under the object {'/'.join(above)}, a file"
    return None
