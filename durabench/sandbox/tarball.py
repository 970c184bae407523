"""Tar archives in memory: how files cross into and out of a container."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable
from pathlib import PurePosixPath

__all__ = ["pack", "unpack"]


def pack(
    files: Iterable[tuple[PurePosixPath, bytes]],
    dirs: Iterable[tuple[PurePosixPath, int]] = (),
) -> bytes:
    """A tar archive of ``files`` (paths relative to the extraction root), parents included.

    ``dirs`` come first, each with its mode and owned by root: extracted, they are made
    (their parents too) or, already there, given that mode (a volume's root included).
    """
    buf = io.BytesIO()
    seen: set[PurePosixPath] = set()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, mode in dirs:
            seen.add(path)
            info = tarfile.TarInfo(path.as_posix())
            info.type = tarfile.DIRTYPE
            info.mode = mode
            tar.addfile(info)
        for path, data in files:
            for parent in reversed(path.parents[:-1]):
                if parent not in seen:
                    seen.add(parent)
                    info = tarfile.TarInfo(parent.as_posix())
                    info.type = tarfile.DIRTYPE
                    info.mode = 0o755
                    tar.addfile(info)
            info = tarfile.TarInfo(path.as_posix())
            info.size = len(data)
            info.mode = 0o755 if data.startswith(b"#!") else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unpack(archive: bytes, *, max_file_bytes: int | None = None) -> dict[str, bytes]:
    """Regular files of ``archive`` by path, with the archive's top directory stripped."""
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as tar:
        for member in tar:
            if not member.isfile():
                continue
            if max_file_bytes is not None and member.size > max_file_bytes:
                continue
            parts = PurePosixPath(member.name).parts
            rel = "/".join(parts[1:]) if len(parts) > 1 else parts[0]
            extracted = tar.extractfile(member)
            if extracted is not None:
                files[rel] = extracted.read()
    return files
