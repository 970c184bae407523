"""The workspace before any agent, read once per image and kept on the host.

The diff's left side is the workspace as setup leaves it. Every attempt of a task on one
image starts from the same files, so reading them out of each new sandbox (an archive
read: a ``docker-tar`` process in the daemon, tens of milliseconds) repeats the same work.
A snapshot is kept under a key of everything that decides those files, and reused only
when nothing else can have changed them:

- the image's id (content-addressed: the same id, the same files), never its tag;
- the workspace's path and the read's limits (the same limits leave out the same files);
- the setup commands, as run, in order (durabench's own adapters run them as root before
  the agent exists; a command that wrote something new each time would be a defect of
  the adapter, not of this cache);
- nothing placed in the workspace from the host: an attempt that writes a file or mounts a
  host directory there is never cached, since its files are not the image's alone.

Nothing in a sandbox takes part: the snapshot is read before the agent starts, and the
agent reaches neither the image nor the host. A snapshot is written whole under a
temporary name and moved into place, so a reader finds one or none.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from durabench.agents import ExecInput
from durabench.sandbox import Sandbox
from durabench.sandbox.limits import ReadLimits
from durabench.sandbox.tarball import pack

__all__ = ["WorkspaceCache", "snapshot_workspace"]


def _replace_with(dest: Path, write: Path | bytes) -> None:
    """``dest`` holds ``write`` (a file, or bytes) whole, or is left as it was.

    A file is linked where it can be (the same file system), else copied: either way
    ``dest`` keeps its contents when ``write`` is later replaced, as nothing writes a
    snapshot in place.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.part")
    try:
        if isinstance(write, Path):
            try:
                os.link(write, part)
            except OSError:  # another file system, or links refused
                shutil.copyfile(write, part)
        else:
            part.write_bytes(write)
        os.replace(part, dest)
    finally:
        part.unlink(missing_ok=True)


class WorkspaceCache:
    """Snapshots of the workspace before any agent, one file per key, in ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def key(
        image_id: str,
        workspace: PurePosixPath,
        limits: ReadLimits,
        setup: Sequence[ExecInput],
        placed: Iterable[str],
    ) -> str | None:
        """A name for everything that decides the snapshot's files (module docstring).

        ``None``: not to be cached (no image id, or a path ``placed`` from the host, a file,
        directory or mount, is in the workspace).
        """
        inside = (PurePosixPath(p) for p in placed)
        if not image_id or any(p == workspace or p.is_relative_to(workspace) for p in inside):
            return None
        parts = {
            "image": image_id,
            "workspace": str(workspace),
            "limits": limits.model_dump(mode="json"),
            "setup": [step.model_dump(mode="json") for step in setup],
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.tar"

    def copy_to(self, key: str, dest: Path) -> bool:
        """Place the snapshot of ``key`` at ``dest``; ``False``: there is none."""
        if not self._path(key).is_file():
            return False
        try:
            _replace_with(dest, self._path(key))
        except FileNotFoundError:  # the cache was cleared meanwhile
            return False
        return True

    def keep(self, key: str, source: Path) -> None:
        """Keep ``source`` (a snapshot just read) as the snapshot of ``key``."""
        _replace_with(self._path(key), source)


async def snapshot_workspace(
    sandbox: Sandbox,
    workspace: PurePosixPath,
    limits: ReadLimits,
    dest: Path,
    cache: tuple[WorkspaceCache, str] | None = None,
) -> None:
    """Write the workspace's snapshot (a tar under ``workspace/``) to ``dest``.

    From ``cache`` (the cache and the key) when it holds one; else read from the sandbox,
    and kept there.
    """
    if cache is not None:
        found = await asyncio.to_thread(cache[0].copy_to, cache[1], dest)
        if found:
            return
    read = await sandbox.read_tree(str(workspace), limits=limits)
    tar = await asyncio.to_thread(
        pack, ((PurePosixPath("workspace", k), v) for k, v in read.files.items())
    )
    await asyncio.to_thread(_replace_with, dest, tar)
    if cache is not None:
        await asyncio.to_thread(cache[0].keep, cache[1], dest)
