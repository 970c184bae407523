"""Reads of a sandbox's files stay bounded whatever the agent left (no Docker needed)."""

from __future__ import annotations

import tarfile
from collections.abc import Iterator

from durabench.sandbox.docker.archive import ArchiveStream, read_one, read_tree_limited
from durabench.sandbox.limits import OutputTail, ReadLimits


def _tar_chunks(files: list[tuple[str, int | bytes]]) -> Iterator[bytes]:
    """A tar archive of ``files`` (content, or a size of zeros made as they are read:
    a sparse file's), streamed in chunks as Docker sends one."""
    for name, content in files:
        info = tarfile.TarInfo(f"top/{name}")
        info.size = len(content) if isinstance(content, bytes) else content
        yield info.tobuf(format=tarfile.PAX_FORMAT)
        if isinstance(content, bytes):
            yield content
        else:
            for left in range(content, 0, -(1 << 20)):
                yield bytes(min(left, 1 << 20))
        if info.size % tarfile.BLOCKSIZE:
            yield bytes(tarfile.BLOCKSIZE - info.size % tarfile.BLOCKSIZE)
    yield bytes(2 * tarfile.BLOCKSIZE)


def test_a_huge_file_is_left_out_and_said_and_the_read_stops_at_its_cap() -> None:
    consumed = []

    def chunks() -> Iterator[bytes]:
        for chunk in _tar_chunks([("a.txt", b"kept"), ("sparse", 64 << 30), ("z.txt", b"z")]):
            consumed.append(len(chunk))
            yield chunk

    limits = ReadLimits(max_file_bytes=1 << 20, max_stream_bytes=8 << 20)
    read = read_tree_limited(ArchiveStream(chunks(), None, 8 << 20), "/logs", limits)
    assert read.files == {"a.txt": b"kept"}
    assert read.cut == (
        "/logs/sparse: 64.0 GiB, past what is read of /logs (8.0 MiB); reading stopped "
        "there, the files after it left out",
    )
    assert sum(consumed) < 4 << 20  # the 64 GiB were never streamed through


def test_files_skipped_for_their_size_still_count_against_the_stream() -> None:
    files: list[tuple[str, int | bytes]] = [(f"f{i}", 3 << 20) for i in range(5)]
    limits = ReadLimits(max_file_bytes=1 << 20, max_stream_bytes=8 << 20)
    read = read_tree_limited(ArchiveStream(_tar_chunks(files), None, 8 << 20), "/w", limits)
    assert read.files == {}
    assert read.cut[:2] == (
        "/w/f0: 3.0 MiB, over the 1.0 MiB per file, left out",
        "/w/f1: 3.0 MiB, over the 1.0 MiB per file, left out",
    )
    assert "reading stopped there" in read.cut[-1]


def test_file_count_and_total_limits_hold_and_are_said() -> None:
    files: list[tuple[str, int | bytes]] = [(f"f{i}", b"x" * 100) for i in range(50)]
    limits = ReadLimits(max_files=10, max_total_bytes=550)
    read = read_tree_limited(ArchiveStream(_tar_chunks(files), None, 1 << 20), "/w", limits)
    assert len(read.files) == 5  # the total ran out first
    assert any("already kept" in note for note in read.cut)
    read = read_tree_limited(
        ArchiveStream(_tar_chunks(files), None, 1 << 20), "/w", ReadLimits(max_files=10)
    )
    assert len(read.files) == 10 and read.cut == ("/w: more than 10 files; the rest left out",)


def test_cut_notes_are_folded_past_twenty() -> None:
    files: list[tuple[str, int | bytes]] = [(f"big{i}", b"x" * 10) for i in range(100)]
    limits = ReadLimits(max_file_bytes=5)
    read = read_tree_limited(ArchiveStream(_tar_chunks(files), None, 1 << 20), "/w", limits)
    assert len(read.cut) == 20 and read.cut[-1] == "and 81 more files left out"


def test_read_one_reads_the_first_file() -> None:
    assert read_one(ArchiveStream(_tar_chunks([("r", b"1.0")]), 3, 1 << 16)) == b"1.0"


def test_output_tail_keeps_the_last_bytes_in_bounded_memory() -> None:
    tail = OutputTail(limit=10)
    for i in range(10_000):
        tail.add(f"{i:05d}".encode())
    assert tail.value() == b"0999809999"
    assert tail.total_dropped == 50_000 - 10
    assert len(tail._buf) <= 20 + 5


def test_a_name_that_is_not_utf8_is_shown_printable() -> None:
    from pydantic_core import to_json

    name = b"\xff\x1b[31m".decode("utf-8", "surrogateescape")
    files: list[tuple[str, int | bytes]] = [(name, b"x" * 10)]
    read = read_tree_limited(
        ArchiveStream(_tar_chunks(files), None, 1 << 20), "/w", ReadLimits(max_file_bytes=5)
    )
    assert read.cut and "\x1b" not in read.cut[0] and "\\xff" in read.cut[0]
    to_json(read.cut)  # travels through Temporal
