"""Checks every sandbox backend must pass, shared by all backends' tests.

Each check takes a started sandbox and raises ``AssertionError`` with what differed.
``tests/integration/test_sandbox_conformance.py`` runs them against every backend.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath

from durabench.errors import FileTooLarge
from durabench.sandbox.base import Sandbox
from durabench.sandbox.detached import run_step, wrap_step
from durabench.sandbox.limits import ReadLimits
from durabench.sandbox.reaper import REAP_SCRIPT

__all__ = ["CHECKS"]


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


async def text_round_trip(sb: Sandbox) -> None:
    """A text file written is read back the same, parents created."""
    await sb.write_file("/tmp/conformance/deep/a.txt", "héllo\n")
    _expect(await sb.read_file("/tmp/conformance/deep/a.txt") == "héllo\n", "text differs")


async def binary_round_trip(sb: Sandbox) -> None:
    """Bytes written are read back the same."""
    data = bytes(range(256))
    await sb.write_file("/tmp/conformance/b.bin", data)
    _expect(await sb.read_file("/tmp/conformance/b.bin", text=False) == data, "bytes differ")


async def missing_file(sb: Sandbox) -> None:
    """Reading a missing file raises FileNotFoundError."""
    try:
        await sb.read_file("/tmp/conformance/nope")
    except FileNotFoundError:
        return
    raise AssertionError("reading a missing file did not raise FileNotFoundError")


async def exit_code_and_streams(sb: Sandbox) -> None:
    """Exit code, stdout and stderr come back separately."""
    result = await sb.exec(["sh", "-c", "echo out; echo err >&2; exit 7"])
    _expect(result.exit_code == 7, f"exit code {result.exit_code}")
    _expect(result.stdout == "out\n" and result.stderr == "err\n", f"streams {result}")
    _expect(not result.timed_out, "timed_out set on a quick command")


async def env_cwd_and_user(sb: Sandbox) -> None:
    """Environment, working directory and user are honoured."""
    result = await sb.exec(
        ["sh", "-c", 'echo "$GREETING $(pwd) $(id -u)"'],
        env={"GREETING": "hi"},
        cwd="/tmp",
        user="nobody",
    )
    _expect(result.stdout.split()[:2] == ["hi", "/tmp"], f"env/cwd: {result.stdout!r}")
    _expect(result.stdout.split()[2] != "0", "ran as root despite user=nobody")


async def timeout_kills(sb: Sandbox) -> None:
    """A command past its timeout is killed and reported as timed out."""
    result = await sb.exec(["sleep", "30"], timeout_s=1)
    _expect(result.timed_out, f"not reported as timed out: {result}")


def _bases(sb: Sandbox) -> tuple[str, ...]:
    """Where trees are read: ``/tmp``, and each memory volume of the spec.

    A backend may read those another way (Docker from the host, when its daemon is there).
    """
    return ("/tmp", *sb.spec.tmpfs)


async def trees(sb: Sandbox) -> None:
    """read_tree and upload_files agree on relative paths; an absent tree is not found."""
    for base in _bases(sb):
        await sb.write_file(f"{base}/tree/x/1.txt", "1")
        await sb.write_file(f"{base}/tree/2.txt", "2")
        read = await sb.read_tree(f"{base}/tree")
        _expect(read.files == {"x/1.txt": b"1", "2.txt": b"2"} and not read.cut, "read_tree")
        with tempfile.TemporaryDirectory() as tmp:
            copies = {}
            for rel, data in read.files.items():
                (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                (Path(tmp) / rel).write_bytes(data)
                copies[f"{base}/tree2/{rel}"] = Path(tmp) / rel
            await sb.upload_files(copies)
        _expect((await sb.read_tree(f"{base}/tree2")).files == read.files, "upload_files")
        try:
            await sb.read_tree(f"{base}/absent")
            raise AssertionError(f"an absent tree was read in {base}")
        except FileNotFoundError:
            pass


async def files_and_dirs_placed(sb: Sandbox) -> None:
    """write_files makes directories root's with their modes (existing ones too) and files."""
    await sb.exec(["mkdir", "-p", "/tmp/placed/open"], user="0")
    with tempfile.TemporaryDirectory() as tmp:
        host = Path(tmp) / "h.sh"
        host.write_bytes(b"#!/bin/sh\n")
        await sb.write_files(
            {"/tmp/placed/a.txt": "a", "/tmp/placed/deep/b.bin": b"b", "/tmp/placed/h.sh": host},
            dirs={"/tmp/placed/open": 0o777, "/tmp/placed/shut/inner": 0o700},
        )
    modes = await sb.exec(
        ["sh", "-c", "cd /tmp/placed && stat -c '%a %u %n' open shut/inner h.sh"], user="0"
    )
    _expect(
        modes.stdout.split("\n")[:3] == ["777 0 open", "700 0 shut/inner", "755 0 h.sh"],
        f"modes and owners: {modes.stdout!r}",
    )
    read = await sb.read_tree("/tmp/placed")
    want = {"a.txt": b"a", "deep/b.bin": b"b", "h.sh": b"#!/bin/sh\n"}
    _expect(read.files == want, f"files: {read.files}")


async def limits_hold(sb: Sandbox) -> None:
    """Reads stay within their limits and say what they left out."""
    for base in _bases(sb):
        await sb.write_file(f"{base}/big/large.bin", b"x" * 5000)
        await sb.write_file(f"{base}/big/small.txt", b"ok")
        read = await sb.read_tree(f"{base}/big", limits=ReadLimits(max_file_bytes=1000))
        _expect(read.files == {"small.txt": b"ok"}, f"read past the per-file limit: {read.files}")
        _expect(any("large.bin" in note for note in read.cut), f"cut not said: {read.cut}")
    try:
        await sb.read_bytes("/tmp/big/large.bin", max_bytes=1000)
        raise AssertionError("a file over max_bytes was read")
    except FileTooLarge:
        pass
    tail = await sb.read_tail("/tmp/big/large.bin", 10)
    _expect(tail == b"x" * 10, f"tail: {tail!r}")


async def detached_step_runs_once(sb: Sandbox) -> None:
    """A detached step ends with markers; running it again re-attaches, not re-runs."""
    markers = PurePosixPath("/tmp/conformance/steps")
    await sb.exec(["mkdir", "-p", str(markers)])
    script = wrap_step("echo ran; sleep 1; exit 3", markers, 0, 30, f">>{markers}/out.txt")
    end, again = await run_step(sb, script, markers, 0, poll_s=0.2)
    _expect((end.exit_code, end.timed_out, again) == (3, False, False), f"first run: {end}")
    end, again = await run_step(sb, script, markers, 0, poll_s=0.2)
    _expect(again and end.exit_code == 3, "a finished step was not found again")
    _expect(await sb.read_file(str(markers / "out.txt")) == "ran\n", "the step ran twice")
    late = wrap_step("sleep 30", markers, 1, 1, f">>{markers}/out.txt")
    end, _ = await run_step(sb, late, markers, 1, poll_s=0.2)
    _expect(end.timed_out, f"a step past its limit was not reported timed out: {end}")


async def reaper_ends_strays(sb: Sandbox) -> None:
    """The reaper ends a stray process and returns: it spares the shells it runs under."""
    await sb.exec_detached(["sh", "-c", "echo $$ > /tmp/stray.pid; exec sleep 300"])
    for _ in range(100):
        if (await sb.exec(["test", "-s", "/tmp/stray.pid"])).exit_code == 0:
            break
    done = await sb.exec(["sh", "-c", REAP_SCRIPT], user="0")
    _expect(done.exit_code == 0, f"the reaper failed: {done}")
    alive = await sb.exec(
        ["sh", "-c", "p=$(cat /tmp/stray.pid); grep -q '^State:.*[RS]' /proc/$p/status"]
    )
    _expect(alive.exit_code != 0, "a stray process outlived the reaper")


async def others_counted(sb: Sandbox) -> None:
    """others_running: 0 when idle, more while a detached process runs (or no count)."""
    idle = await sb.others_running()
    if idle is None:
        return
    _expect(idle == 0, f"an idle sandbox counts {idle} threads of others")
    await sb.exec_detached(["sh", "-c", "sleep 30"], user="0")
    for _ in range(50):  # the detached exec returns before its process is surely there
        if (running := await sb.others_running() or 0) > 0:
            break
    _expect(running > 0, "a running process was not counted")
    await sb.exec(["pkill", "-f", "sleep 30"], user="0")


async def restart_reattaches(sb: Sandbox) -> None:
    """Starting again re-attaches to the same sandbox and keeps its files."""
    await sb.write_file("/tmp/conformance/keep.txt", "kept")
    await sb.start()
    _expect(await sb.read_file("/tmp/conformance/keep.txt") == "kept", "re-start lost files")


CHECKS: dict[str, Callable[[Sandbox], Awaitable[None]]] = {
    fn.__name__: fn
    for fn in (
        text_round_trip,
        limits_hold,
        binary_round_trip,
        missing_file,
        exit_code_and_streams,
        env_cwd_and_user,
        timeout_kills,
        trees,
        files_and_dirs_placed,
        detached_step_runs_once,
        reaper_ends_strays,
        restart_reattaches,
        others_counted,
    )
}
"""Every conformance check by name."""
