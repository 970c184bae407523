"""Reading a container's files as a tar stream, within limits, never all at once.

Docker hands a path out as a tar archive. It is read here as a stream (``tarfile`` mode
``r|``), member by member, so a sparse 64 GiB file or a million small ones cost the worker
the bytes it keeps and no more. A file too large is skipped on its header's size (which
still streams its bytes past); a file larger than what is left to stream stops the read
at its header, and the stream never goes past :attr:`ReadLimits.max_stream_bytes`.
Closing the stream closes the connection, so the daemon stops sending.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import docker.errors
from docker.models.containers import Container

from durabench.sandbox.docker.errors import map_docker_errors
from durabench.sandbox.docker.tree_keeper import TreeKeeper
from durabench.sandbox.limits import ReadLimits, TreeRead

__all__ = ["ArchiveStream", "open_archive", "read_one", "read_tree_limited"]

_CHUNK = 1 << 16


class _StreamCapReached(Exception):
    """The archive went past the bytes the worker reads."""


class ArchiveStream(io.RawIOBase):
    """A tar archive's chunks as a file, read at most ``cap`` bytes far."""

    def __init__(self, chunks: Iterator[bytes], size: int | None, cap: int) -> None:
        self._chunks = chunks
        self.size = size
        """The path's own size from Docker's stat header (a file's size before reading it)."""
        self._cap = cap
        self._pending = b""
        self.read_so_far = 0

    def readable(self) -> bool:
        """It is."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` from the next chunks.

        Raises:
            _StreamCapReached: the stream went past its cap.
        """
        if not self._pending:
            self._pending = next(self._chunks, b"")
        n = min(len(buffer), len(self._pending))
        if self.read_so_far + n > self._cap:
            raise _StreamCapReached
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        self.read_so_far += n
        return n

    def close(self) -> None:
        """Close the HTTP stream: the daemon stops sending."""
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        super().close()


def open_archive(container: Container, name: str, path: str, cap: int) -> ArchiveStream:
    """Start reading ``path`` of ``container`` (named ``name``) as a tar stream.

    Raises:
        FileNotFoundError: no such path.
        SandboxError: Docker failed.
    """
    try:
        with map_docker_errors(f"reading {path} from {name}"):
            chunks, stat = container.get_archive(path, chunk_size=_CHUNK)
    except docker.errors.NotFound as exc:
        raise FileNotFoundError(f"{path} not found in {name}") from exc
    size = int(stat["size"]) if stat and "size" in stat else None
    return ArchiveStream(iter(chunks), size, cap)


def _relative(member: tarfile.TarInfo) -> str:
    parts = PurePosixPath(member.name).parts
    return "/".join(parts[1:]) if len(parts) > 1 else parts[0]


def read_one(stream: ArchiveStream) -> bytes | None:
    """The first regular file of the archive, or ``None`` when it holds none."""
    with stream, tarfile.open(fileobj=io.BufferedReader(stream, _CHUNK), mode="r|") as tar:
        for member in tar:
            if member.isfile():
                extracted = tar.extractfile(member)
                return extracted.read() if extracted is not None else None
    return None


def read_tree_limited(stream: ArchiveStream, path: str, limits: ReadLimits) -> TreeRead:
    """Regular files of the archive by relative path, as far as ``limits`` allow.

    Symbolic links and special files are never followed or read.
    """
    keeper = TreeKeeper(path, limits)
    try:
        with stream, tarfile.open(fileobj=io.BufferedReader(stream, _CHUNK), mode="r|") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                rel, size = _relative(member), member.size
                if keeper.full() or keeper.past_stream(rel, size, stream.read_so_far):
                    break
                if keeper.too_large(rel, size):
                    continue
                extracted = tar.extractfile(member)
                if extracted is not None:
                    keeper.keep(rel, extracted.read())
    except _StreamCapReached:
        keeper.stream_ended()
    return keeper.result()
