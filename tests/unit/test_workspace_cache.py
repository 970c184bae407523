"""The workspace snapshot's cache: its key holds everything that decides the files, and a
snapshot that came second, or an entry that cannot be read, never counts."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from durabench.agents import ExecInput
from durabench.attempt import WorkspaceCache
from durabench.attempt.workspace_cache import snapshot_workspace
from durabench.sandbox.limits import ReadLimits, TreeRead

WS = PurePosixPath("/workspace")
IMAGE = "sha256:" + "a" * 64
SETUP = (ExecInput(command="useradd agent", user="0"),)
PLACED = {"/durabench/instruction.md": b"Fix it.", "/logs/agent": b"", "/solution/solve.sh": b"x"}


def _key(**changed: object) -> str | None:
    args: dict[str, object] = {
        "image_id": IMAGE,
        "workspace": WS,
        "limits": ReadLimits(),
        "setup": SETUP,
        "placed": PLACED,
    }
    return WorkspaceCache.key(**{**args, **changed})  # type: ignore[arg-type]


def test_the_same_inputs_give_the_same_key() -> None:
    assert _key() is not None
    assert _key() == _key(placed=dict(reversed(PLACED.items())))


def test_each_input_that_decides_the_files_changes_the_key() -> None:
    keys = {
        _key(),
        _key(image_id="sha256:" + "b" * 64),
        _key(workspace=PurePosixPath("/app")),
        _key(limits=ReadLimits(max_files=5)),
        _key(setup=()),
        _key(setup=(ExecInput(command="useradd agent", user="1"),)),
        _key(setup=(ExecInput(command="useradd agent", user="0", env={"A": "1"}),)),
        _key(placed={**PLACED, "/solution/solve.sh": b"y"}),  # a setup step may copy it in
        _key(placed={**PLACED, "/home/agent/.config": b""}),
    }
    assert len(keys) == 9


def test_anything_placed_in_over_or_above_the_workspace_is_never_cached() -> None:
    assert _key(placed={**PLACED, "/workspace/notes.md": b"x"}) is None
    assert _key(placed={**PLACED, "/workspace": b""}) is None  # a mount over it
    assert _key(placed={**PLACED, "/": b""}) is None  # a mount above it
    assert _key(placed={"/workspace-other/x": b""}) is not None  # a sibling is not inside


def test_no_image_id_no_cache() -> None:
    assert _key(image_id="") is None
    assert _key(image_id=None) is None


class _Sandbox:
    """Reads a workspace of one file; counts the reads."""

    def __init__(self, text: bytes) -> None:
        self.text, self.reads = text, 0

    async def read_tree(self, path: str, *, limits: ReadLimits) -> TreeRead:
        self.reads += 1
        return TreeRead({"a.py": self.text})


async def test_a_snapshot_read_once_is_copied_for_the_next_attempt(tmp_path: Path) -> None:
    cache, key = WorkspaceCache(tmp_path / "cache"), "k" * 64
    box: Any = _Sandbox(b"before")
    await snapshot_workspace(box, WS, ReadLimits(), tmp_path / "one.tar", (cache, key))
    await snapshot_workspace(box, WS, ReadLimits(), tmp_path / "two.tar", (cache, key))
    assert box.reads == 1
    assert (tmp_path / "two.tar").read_bytes() == (tmp_path / "one.tar").read_bytes()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [f"{key}.tar"]  # no parts left


async def test_a_snapshot_that_came_second_is_neither_used_nor_kept(tmp_path: Path) -> None:
    """A provision that outlived its retry may read the workspace after the agent began."""
    cache, key, dest = WorkspaceCache(tmp_path / "cache"), "k" * 64, tmp_path / "before.tar"
    first: Any = _Sandbox(b"before")
    await snapshot_workspace(first, WS, ReadLimits(), dest, None)  # the retry's, published
    kept = dest.read_bytes()
    late: Any = _Sandbox(b"after the agent began")
    await snapshot_workspace(late, WS, ReadLimits(), dest, (cache, key))
    assert dest.read_bytes() == kept
    assert cache.read(key) is None


async def test_an_entry_that_cannot_be_read_sends_the_attempt_to_its_sandbox(
    tmp_path: Path,
) -> None:
    cache, key = WorkspaceCache(tmp_path / "cache"), "k" * 64
    (tmp_path / "cache" / f"{key}.tar").mkdir(parents=True)  # unreadable as a file
    box: Any = _Sandbox(b"before")
    await snapshot_workspace(box, WS, ReadLimits(), tmp_path / "one.tar", (cache, key))
    assert box.reads == 1 and (tmp_path / "one.tar").is_file()


async def test_a_file_system_without_links_still_gets_the_snapshot_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(src: object, dst: object) -> None:
        raise PermissionError("links are not allowed here")

    monkeypatch.setattr(os, "link", refused)
    dest = tmp_path / "before.tar"
    first: Any = _Sandbox(b"before")
    await snapshot_workspace(first, WS, ReadLimits(), dest, None)
    kept = dest.read_bytes()
    late: Any = _Sandbox(b"after the agent began")
    await snapshot_workspace(late, WS, ReadLimits(), dest, None)
    assert dest.read_bytes() == kept and kept
