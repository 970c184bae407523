"""The workspace snapshot's cache key: everything that decides the files, nothing else."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from durabench.agents import ExecInput
from durabench.attempt import WorkspaceCache
from durabench.sandbox.limits import ReadLimits

WS = PurePosixPath("/workspace")
IMAGE = "sha256:" + "a" * 64
SETUP = (ExecInput(command="useradd agent", user="0"),)
OUTSIDE = ("/durabench/instruction.md", "/logs/agent", "/solution/solve.sh")


def _key(**changed: object) -> str | None:
    args: dict[str, object] = {
        "image_id": IMAGE,
        "workspace": WS,
        "limits": ReadLimits(),
        "setup": SETUP,
        "placed": OUTSIDE,
    }
    return WorkspaceCache.key(**{**args, **changed})  # type: ignore[arg-type]


def test_the_same_inputs_give_the_same_key() -> None:
    assert _key() is not None
    assert _key() == _key()


def test_each_input_that_decides_the_files_changes_the_key() -> None:
    keys = {
        _key(),
        _key(image_id="sha256:" + "b" * 64),
        _key(workspace=PurePosixPath("/app")),
        _key(limits=ReadLimits(max_files=5)),
        _key(setup=()),
        _key(setup=(ExecInput(command="useradd agent", user="1"),)),
        _key(setup=(ExecInput(command="useradd agent", user="0", env={"A": "1"}),)),
    }
    assert len(keys) == 7


def test_anything_placed_in_the_workspace_from_the_host_is_never_cached() -> None:
    assert _key(placed=(*OUTSIDE, "/workspace/notes.md")) is None
    assert _key(placed=(*OUTSIDE, "/workspace")) is None  # a mount over it
    assert _key(placed=("/workspace-other/x",)) is not None  # a sibling is not inside


def test_no_image_id_no_cache() -> None:
    assert _key(image_id="") is None


def test_a_kept_snapshot_is_copied_whole(tmp_path: Path) -> None:
    cache, key = WorkspaceCache(tmp_path / "cache"), "k" * 64
    assert not cache.copy_to(key, tmp_path / "miss.tar")
    assert not (tmp_path / "miss.tar").exists()
    (tmp_path / "read.tar").write_bytes(b"snapshot")
    cache.keep(key, tmp_path / "read.tar")
    assert cache.copy_to(key, tmp_path / "dest.tar")
    assert (tmp_path / "dest.tar").read_bytes() == b"snapshot"
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [f"{key}.tar"]  # no parts left
