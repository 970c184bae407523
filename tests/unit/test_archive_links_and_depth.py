"""A tree read misses no file silently: hard links under every name, deep paths noted.

``docker-tar`` sends a file with several names once, as a regular member under the name
it met first, and each later name as a link member to it; a file whose path is past the
daemon's path limit (4,096 bytes with the container's root before it) it does not send
at all. The read keeps every name of a linked file (so a hard link under an earlier name
cannot hide a file from ``submission.patch``) and notes, in ``left_out``, what the
daemon could not send (issue 52, defect 10).
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from durabench.sandbox.docker import host_read
from durabench.sandbox.docker.archive import (
    DEEP_DIR_BYTES,
    ArchiveStream,
    ListDirs,
    read_tree_limited,
)
from durabench.sandbox.limits import ReadLimits, TreeRead

WORK = "/workspace"


def _tar(members: Sequence[tuple[str, bytes | str | None]]) -> Iterator[bytes]:
    """An archive as Docker streams one: ``(name, content)``, a ``str`` content naming
    the earlier member a hard link points to, ``None`` a directory."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in members:
            info = tarfile.TarInfo(name)
            if content is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif isinstance(content, str):
                info.type, info.linkname = tarfile.LNKTYPE, content
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    data = out.getvalue()
    return iter([data[i : i + 1000] for i in range(0, len(data), 1000)])


def _read(chunks: Iterator[bytes], list_dirs: ListDirs | None = None) -> TreeRead:
    stream = ArchiveStream(chunks, None, 1 << 30)
    return read_tree_limited(stream, WORK, ReadLimits(), list_dirs=list_dirs)


def test_a_file_linked_under_an_earlier_name_is_read_under_both() -> None:
    """The agent's ``ln src/main.py .a``: ``.a`` sorts first and carries the bytes."""
    members = [
        ("workspace", None),
        ("workspace/.a", b"print('changed')\n"),
        ("workspace/src", None),
        ("workspace/src/main.py", "workspace/.a"),
    ]
    read = read_tree_limited(ArchiveStream(_tar(members), None, 1 << 30), WORK, ReadLimits())
    assert read.files == {".a": b"print('changed')\n", "src/main.py": b"print('changed')\n"}
    assert read.cut == ()


def test_a_link_to_a_file_left_out_for_its_size_is_left_out_and_said() -> None:
    members = [("workspace", None), ("workspace/big", b"x" * 100), ("workspace/z", "workspace/big")]
    read = read_tree_limited(
        ArchiveStream(_tar(members), None, 1 << 30), WORK, ReadLimits(max_file_bytes=10)
    )
    assert read.files == {}
    assert read.cut == (
        "/workspace/big: 100 B, over the 10 B per file, left out",
        "/workspace/z: a second name of /workspace/big, left out with it",
    )


def test_links_count_against_the_files_and_bytes_kept() -> None:
    """A thousand names of one file are a thousand files to the limits."""
    members: list[tuple[str, bytes | str | None]] = [("workspace", None), ("workspace/f", b"abc")]
    members += [(f"workspace/l{i:04d}", "workspace/f") for i in range(1000)]
    read = read_tree_limited(
        ArchiveStream(_tar(members), None, 1 << 30), WORK, ReadLimits(max_total_bytes=30)
    )
    assert len(read.files) == 10  # 3 bytes each, 30 in all
    assert read.cut[-1] == "and 972 more files left out"  # 991 notes, 19 shown


def _deep(levels: int) -> list[str]:
    """Directories 120 bytes a level below ``workspace``: the last is ``levels`` deep."""
    return ["workspace/" + "/".join(["d" * 120] * n) for n in range(1, levels + 1)]


def test_a_file_past_the_path_limit_is_noted_as_left_out() -> None:
    """What the daemon could not send below its deepest directories is listed there
    (``find`` as root in the sandbox) and each name the archive lacks is noted."""
    dirs = _deep(33)  # "/workspace" + 33 * 121 = 4,003 bytes: past DEEP_DIR_BYTES (3,584)
    members: list[tuple[str, bytes | str | None]] = [("workspace", None), ("workspace/a", b"a")]
    members += [(d, None) for d in dirs]
    asked: list[list[str]] = []

    def lister(paths: list[str]) -> list[str]:
        asked.append(paths)
        return ["/" + dirs[-1] + "/deep.txt", "/" + dirs[-1] + "/sub"]

    read = read_tree_limited(
        ArchiveStream(_tar(members), None, 1 << 30), WORK, ReadLimits(), list_dirs=lister
    )
    assert read.files == {"a": b"a"}
    deep = [d for d in dirs if len(d) + 1 >= DEEP_DIR_BYTES]
    assert asked == [["/" + d for d in deep]] and len(deep) == 4  # 3,640 to 4,003 bytes
    assert len(read.cut) == 2
    assert read.cut[0].startswith("/workspace/dddd") and read.cut[0].endswith(
        "/deep.txt: its path is past what the daemon reads (4,096 bytes with the "
        "container's root), left out with anything below it"
    )
    assert read.cut[1].endswith(
        "/sub: its path is past what the daemon reads (4,096 bytes "
        "with the container's root), left out with anything below it"
    )


def test_a_shallow_tree_asks_nothing_and_a_lister_that_fails_is_said() -> None:
    members: list[tuple[str, bytes | str | None]] = [("workspace", None), ("workspace/a", b"a")]

    def never(paths: list[str]) -> list[str]:
        raise AssertionError("a shallow tree lists nothing")

    assert _read(_tar(members), list_dirs=never) == (_read(_tar(members)))

    def broken(paths: list[str]) -> list[str]:
        raise OSError("exec failed")

    members += [(d, None) for d in _deep(33)]
    read = read_tree_limited(
        ArchiveStream(_tar(members), None, 1 << 30), WORK, ReadLimits(), list_dirs=broken
    )
    assert read.cut[-1].endswith(
        "directories at the daemon's path limit could not be listed; files below them "
        "may be left out"
    )


def test_the_host_walk_reads_every_name_of_a_linked_file(tmp_path: Path) -> None:
    root = tmp_path / "vol"
    root.mkdir()
    (root / "b.txt").write_bytes(b"x")
    os.link(root / "b.txt", root / "a.txt")
    os.link(root / "b.txt", root / "c.txt")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        read = host_read.walk(fd, "/logs/x", ReadLimits())
    finally:
        os.close(fd)
    assert read is not None and read.files == {"a.txt": b"x", "b.txt": b"x", "c.txt": b"x"}
