"""Reading a container's files as a tar stream, within limits, never all at once.

Docker hands a path out as a tar archive. It is read here as a stream (``tarfile`` mode
``r|``), member by member, so a sparse 64 GiB file or a million small ones cost the worker
the bytes it keeps and no more. A file too large is skipped on its header's size (which
still streams its bytes past); a file larger than what is left to stream stops the read
at its header, and the stream never goes past :attr:`ReadLimits.max_stream_bytes`.
Closing the stream closes the connection, so the daemon stops sending.

A file with several names comes once, under the name met first, and each later name as
a link member to it: every name is kept, with the first one's bytes. A file whose path on
the daemon's side is past :data:`PATH_LIMIT` does not come at all (``docker-tar`` skips
it): below the deepest directories the archive holds, the sandbox is asked what is there
(``list_dirs``), and each name the archive lacks is noted as left out.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any

import docker.errors
from docker.models.containers import Container

from durabench.errors import DurabenchError
from durabench.sandbox.docker.errors import map_docker_errors
from durabench.sandbox.docker.tree_keeper import PATH_LIMIT, TreeKeeper
from durabench.sandbox.limits import ReadLimits, TreeRead

__all__ = [
    "DEEP_DIR_BYTES",
    "PATH_LIMIT",
    "ArchiveStream",
    "ListDirs",
    "open_archive",
    "read_one",
    "read_tree_limited",
]

_CHUNK = 1 << 16
DEEP_DIR_BYTES = PATH_LIMIT - 512
"""A directory whose path in the sandbox is this long may hold names the daemon cannot
reach: a name is up to 255 bytes, the container's root on the host some 100 to 250."""
_MAX_DEEP_DIRS = 64
"""Deep directories listed in one read; the rest are said unlisted."""

ListDirs = Callable[[list[str]], list[str]]
"""What the sandbox holds right below some of its directories, as absolute paths.

Raises:
    OSError, DurabenchError: the sandbox could not say.
"""


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


def read_tree_limited(
    stream: ArchiveStream, path: str, limits: ReadLimits, *, list_dirs: ListDirs | None = None
) -> TreeRead:
    """Regular files of the archive by relative path, as far as ``limits`` allow.

    Symbolic links and special files are never followed or read; a hard link's name is
    its file's. ``list_dirs``: how to ask the sandbox what lies below its deepest
    directories (``None``: it cannot be asked, and deep directories are said unlisted).
    """
    keeper, deep = TreeKeeper(path, limits), _DeepDirs(path)
    try:
        with stream, tarfile.open(fileobj=io.BufferedReader(stream, _CHUNK), mode="r|") as tar:
            for member in tar:
                deep.met(member)
                if not _take(tar, member, keeper, stream):
                    return keeper.result()
    except _StreamCapReached:
        keeper.stream_ended()
        return keeper.result()
    deep.note_unreached(keeper, list_dirs)
    return keeper.result()


def _take(
    tar: tarfile.TarFile, member: tarfile.TarInfo, keeper: TreeKeeper, stream: ArchiveStream
) -> bool:
    """Keep the member if it is a file (or a file's later name); ``False``: stop reading."""
    rel = _relative(member)
    if member.islnk():
        return keeper.keep_link(rel, _relative(tarfile.TarInfo(member.linkname)))
    if not member.isfile():
        return True
    if keeper.full() or keeper.past_stream(rel, member.size, stream.read_so_far):
        return False
    if not keeper.too_large(rel, member.size):
        extracted = tar.extractfile(member)
        if extracted is not None:
            keeper.keep(rel, extracted.read())
    return True


class _DeepDirs:
    """The archive's directories at the daemon's path limit, and the names met below them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.base = posixpath.dirname(path.rstrip("/")) or "/"
        self.dirs: list[str] = []
        self.known: set[str] = set()
        self.below: set[str] = set()

    def met(self, member: tarfile.TarInfo) -> None:
        """Note a member: a deep directory, or a name right below one."""
        full = posixpath.join(self.base, member.name)
        if posixpath.dirname(full) in self.known:
            self.below.add(_comparable(full))
        if member.isdir() and len(full.encode("utf-8", "surrogateescape")) >= DEEP_DIR_BYTES:
            self.dirs.append(full)
            self.known.add(full)

    def note_unreached(self, keeper: TreeKeeper, list_dirs: ListDirs | None) -> None:
        """Note each name below a deep directory that the archive lacks."""
        if not self.dirs:
            return
        asked = self.dirs[:_MAX_DEEP_DIRS]
        try:
            if list_dirs is None:
                raise OSError("no way to list the sandbox's directories")
            names = list_dirs(asked)
        except (OSError, DurabenchError):
            keeper.unlisted(len(self.dirs))
            return
        if len(self.dirs) > len(asked):
            keeper.unlisted(len(self.dirs) - len(asked))
        for name in names:
            if name.startswith(self.path + "/") and _comparable(name) not in self.below:
                keeper.unreached(name[len(self.path) + 1 :])


def _comparable(name: str) -> str:
    """A name as both the archive and a listing decoded with replacement show it."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
