"""Reading a directory of a Daytona sandbox as one capped tar, within limits.

Daytona has no archive endpoint: a root script in the sandbox tars the regular files
under the path (files over the per-file limit left out there, unread, and listed
apart), cuts the stream at :attr:`ReadLimits.max_stream_bytes` and prints it as base64.
The worker reads that tar with the Docker backend's limited reader, so both backends
keep and cut the same files.
"""

from __future__ import annotations

import base64
import shlex
from collections.abc import Awaitable, Callable
from pathlib import PurePosixPath

from durabench.numerals import read_int
from durabench.sandbox.docker.archive import ArchiveStream, read_tree_limited
from durabench.sandbox.limits import ReadLimits, TreeRead, human_bytes

__all__ = ["read_tree_remote"]

_MISSING = 3
_MAX_LISTED = 20

Run = Callable[[str], Awaitable[tuple[int, str]]]


def _scripts(path: str, limits: ReadLimits) -> tuple[str, str]:
    p = PurePosixPath(path)
    parent, base = shlex.quote(str(p.parent)), shlex.quote(p.name or ".")
    check = (  # stderr dropped: the toolbox mixes it into the base64 output
        f"exec 2>/dev/null; [ -d {shlex.quote(path)} ] || exit {_MISSING}; "
        f"cd {parent} || exit {_MISSING}; "
    )
    small = big = ""
    if limits.max_file_bytes is not None:
        small = f" -size -{limits.max_file_bytes + 1}c"
        big = f" -size +{limits.max_file_bytes}c"
    tar = (
        f"{check}find {base} -type f{small} -print0 | tar --null --no-recursion -T - -cf - "
        f"| head -c {limits.max_stream_bytes + 1} | base64 -w0"
    )
    listing = (
        f"{check}find {base} -type f{big} -printf '%s %P\\0' "
        f"| head -z -n {_MAX_LISTED} | base64 -w0"
    )
    return f"sh -c {shlex.quote(tar)}", f"sh -c {shlex.quote(listing)}"


async def read_tree_remote(run: Run, name: str, path: str, limits: ReadLimits) -> TreeRead:
    """Every regular file under ``path`` by relative path, within ``limits``.

    Raises:
        FileNotFoundError: ``path`` is not a directory in the sandbox.
    """
    tar, listing = _scripts(path, limits)
    code, output = await run(tar)
    if code == _MISSING:
        raise FileNotFoundError(f"{path} not found in {name}")
    data = base64.b64decode(output.strip())
    stream = ArchiveStream(iter([data]), None, limits.max_stream_bytes)
    read = read_tree_limited(stream, path, limits)
    if limits.max_file_bytes is None:
        return read
    _, big = await run(listing)
    notes = []
    for entry in base64.b64decode(big.strip()).split(b"\0"):
        size, _, rel = entry.decode("utf-8", "backslashreplace").partition(" ")
        bytes_ = read_int(size)
        if bytes_ is not None:
            notes.append(
                f"{path}/{rel}: {human_bytes(bytes_)}, over the "
                f"{human_bytes(limits.max_file_bytes)} per file, left out"
            )
    return TreeRead(read.files, (*notes, *read.cut))
