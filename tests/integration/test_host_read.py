"""A Docker sandbox's memory volumes are read from this host, and no more than that.

Every archive read makes the daemon run a ``docker-tar``. With the daemon on this host a
``/logs`` volume is mounted here too, so it is walked here; everything in it is the
agent's, planted by root in the container to lead the walk out of the volume (links
that resolve on the host), to block it (a FIFO) or to make it read gigabytes (a sparse
file). What is kept must be what the archive read keeps, in the same order.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from durabench.sandbox import DockerSandbox, SandboxSpec
from durabench.sandbox.docker import sandbox as docker_sandbox
from durabench.sandbox.docker.archive import open_archive, read_tree_limited
from durabench.sandbox.limits import ReadLimits, TreeRead
from durabench.settings.values import Settings

pytestmark = pytest.mark.docker

AGENT = "/logs/agent"
SECRET = b"the host's own, never read"
PLANT = """set -e
cd /logs/agent
mkdir -p a/b/c B
for i in $(seq -w 0 29); do echo "file $i" > "n$i"; done
echo deep > a/b/c/d.txt
echo one > a.txt; echo two > a-b; echo three > a0; echo acute > café.txt
printf odd > "$(printf 'odd\\377')"
head -c 2097152 /dev/zero > big.bin
ln a.txt hard
ln -s "$1" to-host
ln -s "$(dirname "$1")" to-dir
ln -s "$(dirname "$1")" a/b/deeper
mkfifo fifo
truncate -s 64G zz-sparse
"""
"""Run as root in the container with the host file's absolute path (dangling there)."""

CASES = {
    "generous": ReadLimits(
        max_file_bytes=1 << 20, max_total_bytes=8 << 20, max_stream_bytes=32 << 20
    ),
    "files": ReadLimits(max_files=27),
    "total": ReadLimits(max_total_bytes=40),
}


@pytest.fixture
async def box(settings: Settings) -> AsyncIterator[DockerSandbox]:
    sb = DockerSandbox(
        SandboxSpec(
            name=f"durabench-hostread-{uuid.uuid4().hex[:8]}",
            image=settings.base_image,
            labels={"durabench.run": "host-read"},
            tmpfs={AGENT: 16},
        )
    )
    await sb.start()
    try:
        yield sb
    finally:
        await sb.stop(delete=True)


@pytest.fixture
def reader(box: DockerSandbox) -> DockerSandbox:
    """A handle that finds the container by name, as each activity's sandbox does."""
    return DockerSandbox(SandboxSpec(name=box.spec.name))


@pytest.fixture
def archives(reader: DockerSandbox, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the daemon is asked to archive."""
    asked: list[str] = []
    get: Callable[..., Any] = reader.client.api.get_archive

    def counted(container: str, path: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(path)
        return get(container, path, *args, **kwargs)

    monkeypatch.setattr(reader.client.api, "get_archive", counted)
    return asked


@pytest.fixture
def host_file() -> Iterator[Path]:
    """A file only the host has, at a path unique to the test."""
    secret = Path("/tmp") / f"durabench-hostread-{uuid.uuid4().hex}" / "secret"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    yield secret
    secret.unlink()
    secret.parent.rmdir()


class OpenSpy:
    """Every ``os.open`` while it is on: refused (and noted) when it would leave the
    volume, block, or open anything but a directory or a regular file."""

    def __init__(self, forbidden: set[tuple[int, int]]) -> None:
        self.forbidden = forbidden
        self.refused: list[str] = []
        self.opened = 0
        self._open = os.open

    def __call__(
        self, path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
    ) -> int:
        try:
            target = os.stat(path, dir_fd=dir_fd, follow_symlinks=not flags & os.O_NOFOLLOW)
        except OSError:
            target = None
        if target is not None and (
            (target.st_dev, target.st_ino) in self.forbidden
            or not (stat.S_ISDIR(target.st_mode) or stat.S_ISREG(target.st_mode))
        ):
            self.refused.append(str(path))
            raise AssertionError(f"opened {path!r}: a host file, or no file or directory")
        self.opened += 1
        return self._open(path, flags, mode, dir_fd=dir_fd)


def _archive_read(reader: DockerSandbox, path: str, limits: ReadLimits) -> TreeRead:
    container = reader.client.containers.get(reader.spec.name)
    stream = open_archive(container, reader.spec.name, path, limits.max_stream_bytes)
    return read_tree_limited(stream, path, limits)


def _but_sparse(cut: tuple[str, ...]) -> tuple[str, ...]:
    """The notes, the sparse file's own left aside (each read says it its way)."""
    return tuple("(zz-sparse)" if "/zz-sparse:" in note else note for note in cut)


async def _plant(box: DockerSandbox, host_file: Path) -> None:
    planted = await box.exec(["sh", "-c", PLANT, "plant", str(host_file)], user="0")
    assert planted.exit_code == 0, planted


@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_host_read_keeps_what_the_archive_keeps_and_never_leaves_the_volume(
    box: DockerSandbox,
    reader: DockerSandbox,
    archives: list[str],
    host_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    await _plant(box, host_file)
    limits = CASES[case]
    forbidden = {(s.st_dev, s.st_ino) for s in (host_file.stat(), host_file.parent.stat())}
    spy = OpenSpy(forbidden)
    with monkeypatch.context() as patched:
        patched.setattr(os, "open", spy)
        host = await reader.read_tree(AGENT, limits=limits)
    assert archives == [] and spy.refused == [] and spy.opened > 0
    archive = _archive_read(reader, AGENT, limits)
    assert list(host.files.items()) == list(archive.files.items())
    assert _but_sparse(host.cut) == _but_sparse(archive.cut)
    assert not any(SECRET in data for data in host.files.values())
    assert not {"to-host", "to-dir", "fifo", "a/b/deeper"} & set(host.files)
    if case == "generous":  # every regular file but the large, in docker-tar's order
        names = ["a/b/c/d.txt", "a-b", "a.txt", "a0", "café.txt", "hard"]  # hard: a.txt's
        assert list(host.files) == [*names, *(f"n{i:02d}" for i in range(30)), "odd\udcff"]
        assert host.cut[-1] == f"{AGENT}/zz-sparse: 64.0 GiB, over the 1.0 MiB per file, left out"
        assert "reading stopped there" in archive.cut[-1]


async def test_a_read_of_a_sparse_giant_reads_on_past_it(
    box: DockerSandbox, reader: DockerSandbox, archives: list[str]
) -> None:
    """Nothing is streamed: a file left out for its size costs nothing and stops nothing."""
    made = await box.exec(
        ["sh", "-c", f"cd {AGENT} && truncate -s 64G a-sparse && echo z > z.txt"], user="0"
    )
    assert made.exit_code == 0, made
    host = await reader.read_tree(AGENT)
    assert archives == [] and host.files == {"z.txt": b"z\n"}
    assert host.cut == (f"{AGENT}/a-sparse: 64.0 GiB, over the 1.0 MiB per file, left out",)


async def test_the_memory_volumes_allow_no_devices_and_no_setuid(box: DockerSandbox) -> None:
    mounts = await box.exec(["grep", f" {AGENT} ", "/proc/mounts"])
    options = mounts.stdout.split()[3].split(",")
    assert {"nodev", "nosuid"} <= set(options), mounts.stdout


async def test_a_path_outside_the_volumes_is_read_through_the_daemon(
    box: DockerSandbox, reader: DockerSandbox, archives: list[str]
) -> None:
    await box.exec(["sh", "-c", f"mkdir -p /tmp/t {AGENT}/a/b && echo 1 > /tmp/t/1"], user="0")
    await box.exec(["sh", "-c", f"echo 2 > {AGENT}/a/b/2"], user="0")
    assert (await reader.read_tree("/tmp/t")).files == {"1": b"1\n"}
    assert (await reader.read_tree(f"{AGENT}/a/b")).files == {"2": b"2\n"}  # two below
    assert (await reader.read_tree(f"{AGENT}/a")).files == {"b/2": b"2\n"}  # right below
    assert archives == ["/tmp/t", f"{AGENT}/a/b"]


@pytest.mark.parametrize("where", ["elsewhere", "absent"])
async def test_a_volume_not_mounted_where_it_is_seen_is_read_through_the_daemon(
    box: DockerSandbox, reader: DockerSandbox, archives: list[str], tmp_path: Path, where: str
) -> None:
    """A worker that sees the daemon's directory but not its mounts finds an empty
    directory at the volume's source: not the volume."""
    await box.exec(["sh", "-c", f"echo real > {AGENT}/real.txt"], user="0")
    decoy = tmp_path / "decoy"
    if where == "elsewhere":
        decoy.mkdir()
        (decoy / "decoy.txt").write_text("not the volume")
    container = reader._container_or_raise()
    for mount in container.attrs["Mounts"]:
        mount["Source"] = str(decoy)
    assert (await reader.read_tree(AGENT)).files == {"real.txt": b"real\n"}
    assert archives == [AGENT]


async def test_a_daemon_elsewhere_is_asked(
    box: DockerSandbox, reader: DockerSandbox, archives: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(docker_sandbox, "local_daemon", lambda base_url: False)
    await box.exec(["sh", "-c", f"echo real > {AGENT}/real.txt"], user="0")
    assert (await reader.read_tree(AGENT)).files == {"real.txt": b"real\n"}
    assert archives == [AGENT]
