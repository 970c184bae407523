"""Reading a container's memory volume from this host, without the daemon's ``docker-tar``.

Every archive read makes the daemon run a ``docker-tar`` process (some 35 ms of CPU),
and an attempt reads its ``/logs`` volumes four times. With the daemon on this host, a
local tmpfs volume is mounted here too, at the ``Source`` of the container's mount
(``/var/lib/docker/volumes/<id>/_data``), so the worker walks it itself.

Everything in the volume is the agent's (root in the sandbox writes in all of them),
and on the host a link it planted resolves against the host's root. So no link is
followed at any step: every directory is opened relative to its parent's descriptor
(``O_NOFOLLOW | O_DIRECTORY``), with names the directory itself listed (never ``/`` or
``..``), and never into another file system; every entry is ``lstat``-ed the same way
and only a regular file is opened, ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO or a leased file
swapped in after the ``lstat`` cannot block the open), then ``fstat``-ed: the same
regular file or the walk gives up. The volume is mounted ``nodev``, so a device node
could not be opened even if one could be made. From a file no more is read than its
``lstat`` size, which the limits allowed, and one byte to see it grew. So every byte
read is the volume's own, and the walk never blocks.

It reads only when sure, else returns ``None`` and the caller reads through the daemon:
the path must be a volume mount's destination or a directory right below one, with no
other mount inside it (the host sees what is under a nested mount, not it); the
``Source`` a directory that is a mount point (a worker that sees the daemon's directory
but not its mounts finds an empty directory there) and ``nodev``; and the walk must meet
no error (permission, a race with a writer) and no more than :data:`MAX_DEPTH`
levels and :data:`MAX_ENTRIES` names, the names it holds to sort each directory.

What is kept is what the archive read keeps (:class:`TreeKeeper`): regular files in
``docker-tar``'s order (Go walks each directory in lexical byte order), a hard link's
later names with its first name's bytes (the archive sends them as links to it), the
same limits and notes. One
difference: nothing is streamed, so ``max_stream_bytes`` counts the bytes read, those
of the files kept. A file left out for its size is never read and stops nothing, where
in an archive its bytes stream past (a sparse giant stops an archive read at its header).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from durabench.sandbox.docker.tree_keeper import TreeKeeper
from durabench.sandbox.limits import ReadLimits, TreeRead

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "host_tree", "volume_dir", "walk"]

MAX_DEPTH = 32
"""Directory levels below the path walked; a deeper tree is read through the daemon."""
MAX_ENTRIES = 20_000
"""Names listed in one walk, all held while their directories are walked (a few MiB at
usual lengths, some tens at the longest); a larger tree is read through the daemon."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1 << 20


class _Unsure(Exception):
    """The walk met what it does not read: the daemon reads the tree instead."""


def _destinations(attrs: Mapping[str, Any]) -> list[PurePosixPath]:
    """Where the container has anything mounted (its mounts and its ``--tmpfs``)."""
    mounts = [m.get("Destination") for m in attrs.get("Mounts") or ()]
    tmpfs = list((attrs.get("HostConfig") or {}).get("Tmpfs") or {})
    return [PurePosixPath(d) for d in mounts + tmpfs if isinstance(d, str)]


def volume_dir(attrs: Mapping[str, Any], path: str) -> tuple[str, str | None] | None:
    """The host directory of the volume ``path`` is, or is right below, and the name below.

    From the container's inspect data (``attrs``): ``None`` when ``path`` is not such a
    plain absolute path, or another mount lies at or under it.
    """
    want = PurePosixPath(path)
    if not path.startswith("/") or str(want) != path or ".." in want.parts:
        return None
    found: tuple[str, PurePosixPath, str | None] | None = None
    for mount in attrs.get("Mounts") or ():
        source, dest = mount.get("Source"), mount.get("Destination")
        if mount.get("Type") != "volume" or not isinstance(source, str) or not dest:
            continue
        if PurePosixPath(dest) == want:
            found = (source, want, None)
        elif PurePosixPath(dest) == want.parent and found is None:
            found = (source, want.parent, want.name)
    if found is None or not found[0].startswith("/"):
        return None
    source, dest, below = found
    inside = [d for d in _destinations(attrs) if d != dest and (d == want or want in d.parents)]
    return None if inside else (source, below)


def _own_mount(fd: int) -> bool:
    """Whether ``fd`` is the root of a ``nodev`` mount: the volume, not the directory under it."""
    parent = os.stat("..", dir_fd=fd, follow_symlinks=False)
    return os.fstat(fd).st_dev != parent.st_dev and bool(os.fstatvfs(fd).f_flag & os.ST_NODEV)


def host_tree(attrs: Mapping[str, Any], path: str, limits: ReadLimits) -> TreeRead | None:
    """``path``'s regular files read from its volume on this host, within ``limits``.

    ``None`` when not sure (see the module): read it through the daemon instead.
    """
    found = volume_dir(attrs, path)
    if found is None:
        return None
    source, below = found
    try:
        root = os.open(source, _DIR)
    except OSError:
        return None
    try:
        if not _own_mount(root):
            return None
        if below is None:
            return walk(root, path, limits)
        try:
            top = os.open(below, _DIR, dir_fd=root)
        except OSError:
            return None
        try:
            same = os.fstat(top).st_dev == os.fstat(root).st_dev
            return walk(top, path, limits) if same else None
        finally:
            os.close(top)
    except OSError:
        return None
    finally:
        os.close(root)


def walk(fd: int, path: str, limits: ReadLimits) -> TreeRead | None:
    """The regular files under the open directory ``fd`` (``path`` in the sandbox).

    ``None`` when the walk is unsure (see the module).
    """
    walker = _Walker(TreeKeeper(path, limits), os.fstat(fd).st_dev)
    try:
        walker.directory(fd, "", 0)
    except (OSError, _Unsure):
        return None
    return walker.keeper.result()


class _Walker:
    """One walk: what it keeps, what it read, and where it stopped."""

    def __init__(self, keeper: TreeKeeper, device: int) -> None:
        self.keeper = keeper
        self.device = device
        self.listed = 0
        self.read = 0
        """Bytes read: what ``max_stream_bytes`` holds when nothing streams."""
        self.linked: dict[int, str] = {}
        """The first name of each file with several, by inode."""
        self.stopped = False

    def directory(self, fd: int, prefix: str, depth: int) -> None:
        """Walk the open directory ``fd`` (``prefix`` names it), its names in byte order."""
        for name in self._names(fd):
            if self.stopped:
                return
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                self._enter(fd, name, st, prefix + name + "/", depth + 1)
            elif stat.S_ISREG(st.st_mode):
                self._file(fd, name, st, prefix + name)

    def _names(self, fd: int) -> list[str]:
        names: list[str] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                self.listed += 1
                if self.listed > MAX_ENTRIES:
                    raise _Unsure
                names.append(entry.name)
        return sorted(names, key=os.fsencode)

    def _enter(self, fd: int, name: str, st: os.stat_result, prefix: str, depth: int) -> None:
        if depth > MAX_DEPTH or st.st_dev != self.device:
            raise _Unsure
        sub = os.open(name, _DIR, dir_fd=fd)
        try:
            if not _same(os.fstat(sub), st):
                raise _Unsure
            self.directory(sub, prefix, depth)
        finally:
            os.close(sub)

    def _file(self, fd: int, name: str, st: os.stat_result, rel: str) -> None:
        keeper = self.keeper
        if st.st_nlink > 1:  # a later name gets the first one's bytes, as in the archive
            first = self.linked.setdefault(st.st_ino, rel)
            if first != rel:
                self.stopped = not keeper.keep_link(rel, first)
                return
        if keeper.full():
            self.stopped = True
        elif not keeper.too_large(rel, st.st_size):
            if keeper.past_stream(rel, st.st_size, self.read):
                self.stopped = True
            else:
                keeper.keep(rel, self._contents(fd, name, st))

    def _contents(self, fd: int, name: str, st: os.stat_result) -> bytes:
        """The file's bytes: no more than its ``lstat`` size allowed, plus one to see growth."""
        f = os.open(name, _FILE, dir_fd=fd)
        try:
            if not _same(os.fstat(f), st):
                raise _Unsure
            chunks: list[bytes] = []
            left = st.st_size + 1
            while left > 0 and (chunk := os.read(f, min(left, _CHUNK))):
                chunks.append(chunk)
                left -= len(chunk)
        finally:
            os.close(f)
        data = b"".join(chunks)
        self.read += len(data)
        if len(data) > st.st_size:
            raise _Unsure
        return data


def _same(opened: os.stat_result, listed: os.stat_result) -> bool:
    """Whether what was opened is what was ``lstat``-ed: same kind, device and inode."""
    kind = stat.S_IFMT(listed.st_mode)
    return stat.S_IFMT(opened.st_mode) == kind and (opened.st_dev, opened.st_ino) == (
        listed.st_dev,
        listed.st_ino,
    )
