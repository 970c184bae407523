"""The host walk of a volume: docker-tar's order, the read limits, and no way out.

A plain directory stands for the volume (the walk is given its descriptor); the volume
found from the container's inspect data, and the mount it must be, are checked here on
data and in tests/integration/test_host_read.py on a real container.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from durabench.sandbox.docker import host_read
from durabench.sandbox.limits import ReadLimits, TreeRead

LIMITS = ReadLimits(max_file_bytes=1 << 20, max_total_bytes=8 << 20)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "vol"
    (root / "a" / "b").mkdir(parents=True)
    (root / "B").mkdir()
    for name, data in {"a/b/c": b"c", "a-b": b"ab", "a.txt": b"at", "a0": b"a0", "z": b"z"}.items():
        (root / name).write_bytes(data)
    return root


def _walk(root: Path, limits: ReadLimits = LIMITS, path: str = "/logs/x") -> TreeRead | None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return host_read.walk(fd, path, limits)
    finally:
        os.close(fd)


def test_files_come_in_docker_tars_order(tree: Path) -> None:
    """Each directory in lexical byte order, a directory's files where its name sorts."""
    (tree / "é").write_bytes(b"e")
    (tree / os.fsdecode(b"\xff")).write_bytes(b"ff")
    read = _walk(tree)
    assert read is not None and not read.cut
    assert list(read.files) == ["a/b/c", "a-b", "a.txt", "a0", "z", "é", "\udcff"]
    assert read.files["a.txt"] == b"at"


def test_links_and_fifos_are_not_files_and_a_second_hard_link_is_its_files(
    tree: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"host")
    (tree / "to-host").symlink_to(secret)
    (tree / "to-dir").symlink_to(tmp_path)
    (tree / "a" / "up").symlink_to(tmp_path)
    os.mkfifo(tree / "fifo")  # opened, it would block the read for good
    os.link(tree / "a.txt", tree / "hard")  # docker-tar sends it as a link to a.txt
    read = _walk(tree)
    assert read is not None
    assert list(read.files) == ["a/b/c", "a-b", "a.txt", "a0", "hard", "z"]
    assert read.files["hard"] == b"at"


def test_a_sparse_giant_is_left_out_unread_and_the_read_goes_on(tree: Path) -> None:
    with open(tree / "a-sparse", "wb") as f:
        f.truncate(64 << 30)
    read = _walk(tree, ReadLimits(max_file_bytes=None, max_total_bytes=1 << 20))
    assert read is not None and "z" in read.files and "a-sparse" not in read.files
    assert read.cut == ("/logs/x/a-sparse: left out, 1.0 MiB already kept",)


def test_the_limits_are_the_archive_reads(tree: Path) -> None:
    (tree / "big").write_bytes(b"x" * 2000)
    read = _walk(tree, ReadLimits(max_file_bytes=1000, max_files=3))
    assert read is not None and list(read.files) == ["a/b/c", "a-b", "a.txt"]
    assert read.cut == ("/logs/x: more than 3 files; the rest left out",)
    read = _walk(tree, ReadLimits(max_file_bytes=1000))
    assert read is not None and read.cut == (
        "/logs/x/big: 2.0 KiB, over the 1000 B per file, left out",
    )
    read = _walk(tree, ReadLimits(max_total_bytes=5))
    assert read is not None and list(read.files) == ["a/b/c", "a-b", "a.txt"]
    assert read.cut[0] == "/logs/x/a0: left out, 5 B already kept"


def test_what_is_read_counts_against_the_stream(tree: Path) -> None:
    """Nothing streams past unread, so the budget is the bytes read of the files kept."""
    read = _walk(tree, ReadLimits(max_stream_bytes=4))
    assert read is not None and list(read.files) == ["a/b/c", "a-b"]
    assert read.cut == (
        "/logs/x/a.txt: 2 B, past what is read of /logs/x (4 B); reading stopped there, "
        "the files after it left out",
    )


def test_a_file_that_grows_as_it_is_read_makes_the_walk_unsure(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.stat

    def smaller(name: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        st = real(name, *args, **kwargs)
        if name != "z":
            return st
        fields = list(st)
        fields[6] -= 1  # st_size: the file as it was a moment before it grew
        return os.stat_result(fields)

    monkeypatch.setattr(os, "stat", smaller)
    assert _walk(tree) is None


@pytest.mark.parametrize(("name", "kind"), [("fifo", 0o100000), ("to-dir", 0o040000)])
def test_a_swap_after_the_lstat_neither_blocks_nor_leads_out(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, kind: int
) -> None:
    """The entry is a FIFO or a link when opened, whatever its ``lstat`` said a moment
    before: the open neither blocks (a FIFO with no writer) nor follows (the link)."""
    os.mkfifo(tree / "fifo")
    (tree / "to-dir").symlink_to(tmp_path)
    real = os.stat

    def swapped(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        st = real(path, *args, **kwargs)
        if path != name:
            return st
        fields = list(st)
        fields[0] = kind | 0o644  # st_mode: what it was when listed
        return os.stat_result(fields)

    monkeypatch.setattr(os, "stat", swapped)
    assert _walk(tree) is None


def test_too_deep_or_too_many_entries_make_the_walk_unsure(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tree.joinpath(*["d"] * (host_read.MAX_DEPTH + 1))
    deep.mkdir(parents=True)
    assert _walk(tree) is None
    (tree / "d").rename(tree.parent / "d")
    assert _walk(tree) is not None
    monkeypatch.setattr(host_read, "MAX_ENTRIES", 5)
    assert _walk(tree) is None


def _attrs(*mounts: tuple[str, str, str], tmpfs: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "Mounts": [{"Type": t, "Source": s, "Destination": d} for t, s, d in mounts],
        "HostConfig": {"Tmpfs": tmpfs},
    }


@pytest.mark.parametrize(
    ("attrs", "path", "found"),
    [
        (_attrs(("volume", "/v/1/_data", "/logs/agent")), "/logs/agent", ("/v/1/_data", None)),
        (_attrs(("volume", "/v/1/_data", "/logs")), "/logs/agent", ("/v/1/_data", "agent")),
        (_attrs(("volume", "/v/1/_data", "/logs")), "/logs/agent/x", None),  # two below
        (_attrs(("bind", "/home/x", "/logs/agent")), "/logs/agent", None),
        (_attrs(("volume", "/v/1/_data", "/logs/agent")), "/logs/agent/", None),
        (_attrs(("volume", "/v/1/_data", "/logs")), "/logs/..", None),
        (_attrs(("volume", "/v/1/_data", "/logs")), "logs", None),
        (  # a mount inside the tree: the host sees the directory under it, not it
            _attrs(("volume", "/v/1/_data", "/logs"), ("volume", "/v/2/_data", "/logs/a/b")),
            "/logs/a",
            None,
        ),
        (_attrs(("volume", "/v/1/_data", "/logs"), tmpfs={"/logs/t": ""}), "/logs", None),
        (
            _attrs(("volume", "/v/1/_data", "/logs"), ("volume", "/v/2/_data", "/logs/agent")),
            "/logs/agent",
            ("/v/2/_data", None),
        ),
        ({"Id": "x"}, "/logs/agent", None),  # a container just made: no inspect data
    ],
)
def test_only_the_containers_own_volume_at_the_path_or_right_above_it_is_read(
    attrs: dict[str, Any], path: str, found: tuple[str, str | None] | None
) -> None:
    assert host_read.volume_dir(attrs, path) == found


def test_a_directory_that_is_no_mount_is_not_read(tree: Path) -> None:
    attrs = _attrs(("volume", str(tree), "/logs/agent"))
    assert host_read.host_tree(attrs, "/logs/agent", LIMITS) is None


def test_a_source_that_is_a_link_is_not_followed(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host_read, "_own_mount", lambda fd: True)  # only the link stops it
    (tmp_path / "link").symlink_to(tree)
    assert (
        host_read.host_tree(_attrs(("volume", str(tmp_path / "link"), "/l")), "/l", LIMITS) is None
    )


@pytest.fixture(autouse=True)
def _no_stray_fds() -> Iterator[None]:
    before = set(os.listdir("/proc/self/fd"))
    yield
    assert set(os.listdir("/proc/self/fd")) <= before | {"fd"}
