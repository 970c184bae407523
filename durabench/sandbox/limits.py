"""How much of a sandbox the worker reads: everything in it is the agent's to shape.

A file the agent wrote may be sparse and claim 64 GiB, a directory may hold a million
files, a log may grow for hours. The worker reads through these limits only, streaming,
so its memory stays flat whatever the agent leaves; what a limit left out is said in
words (:attr:`TreeRead.cut`) and kept with the attempt's result, never dropped silently.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_LIMITS",
    "EXEC_OUTPUT_BYTES",
    "OutputTail",
    "ReadLimits",
    "TreeRead",
    "human_bytes",
]

EXEC_OUTPUT_BYTES = 1 << 20
"""Bytes of a command's stdout and of its stderr kept (the last ones): what durabench's
own commands print is small, and anything larger is the agent's noise."""


class ReadLimits(BaseModel):
    """Caps on one read of a directory tree."""

    model_config = ConfigDict(frozen=True)

    max_file_bytes: int | None = Field(default=1 << 20, gt=0)
    """A larger file is left out (``None``: no file is)."""
    max_total_bytes: int = Field(default=64 << 20, gt=0)
    """Bytes kept in all; files past it are left out."""
    max_files: int = Field(default=10_000, gt=0)
    """Files kept; the rest are left out."""
    max_stream_bytes: int = Field(default=256 << 20, gt=0)
    """Archive bytes read before the read stops (skipping a file still streams it)."""


DEFAULT_LIMITS = ReadLimits()
"""The limits of a read that names none."""


class TreeRead(NamedTuple):
    """The files read, and what the limits left out."""

    files: dict[str, bytes]
    cut: tuple[str, ...] = ()


def human_bytes(n: int) -> str:
    """``n`` bytes, for a person (``1.5 GiB``)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


class OutputTail:
    """The last ``limit`` bytes of a stream, in bounded memory; counts what it dropped."""

    def __init__(self, limit: int = EXEC_OUTPUT_BYTES) -> None:
        self.limit = limit
        self.dropped = 0
        self._buf = bytearray()

    def add(self, chunk: bytes | None) -> None:
        """Append ``chunk``, dropping the oldest bytes past the limit."""
        if not chunk:
            return
        self._buf += chunk
        extra = len(self._buf) - self.limit
        if extra > self.limit:  # trim in batches: amortised O(1) per byte
            del self._buf[:extra]
            self.dropped += extra

    def value(self) -> bytes:
        """The kept bytes (at most ``limit``)."""
        extra = max(0, len(self._buf) - self.limit)
        return bytes(self._buf[extra:])

    @property
    def total_dropped(self) -> int:
        """Bytes of the stream not in :meth:`value`."""
        return self.dropped + max(0, len(self._buf) - self.limit)
