"""The workspace before any agent, read once per image and kept on the host.

The diff's left side is the workspace as setup leaves it. Every attempt of a task on one
image starts from the same files, so reading them out of each new sandbox (an archive
read: a ``docker-tar`` process in the daemon, tens of milliseconds) repeats the same work.
A snapshot is kept under a key of everything that decides those files, and reused only
when nothing else can have changed them:

- the id of the image the sandbox runs, as its backend reports it (content-addressed: the
  same id, the same files), never a tag, which may have moved since;
- the workspace's path and the read's limits (the same limits leave out the same files);
- the setup commands, as run, in order (durabench's own adapters run them as root before
  the agent exists), and every path placed from the host with its contents (a setup
  command may copy one into the workspace);
- nothing placed in, over or above the workspace from the host: an attempt that writes a
  file or mounts a host directory there is never cached, since its files are not the
  image's alone.

Nothing in a sandbox takes part: the snapshot is read before the agent starts, and the
agent reaches neither the image nor the host. Each file is written whole (synced) under a
temporary name and then published: the cache's by a rename, the attempt's own snapshot
only if it does not exist yet. A provision that outlived its own retry (a lost worker
that came back) may read the workspace after the agent began; its snapshot is then the
second, is not published, and never reaches the cache. The cache is best effort: an entry
that cannot be read or kept sends the attempt to its sandbox, as without it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

import structlog

from durabench.agents import ExecInput
from durabench.sandbox import Sandbox
from durabench.sandbox.limits import ReadLimits
from durabench.sandbox.tarball import pack

__all__ = ["WorkspaceCache", "cache_slot", "snapshot_workspace"]

log = structlog.get_logger(__name__)


def _write_part(dest: Path, data: bytes) -> Path:
    """``data`` in a synced file beside ``dest``, under a name nobody else uses."""
    part = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.part")
    with part.open("xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return part


def _publish(dest: Path, data: bytes, *, replace: bool) -> bool:
    """Write ``data`` to ``dest`` whole; ``False``: ``dest`` existed and ``replace`` is off."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = _write_part(dest, data)
    try:
        if replace:
            os.replace(part, dest)
            return True
        try:
            os.link(part, dest)  # fails if it exists: the first snapshot stands
        except FileExistsError:
            return False
        except OSError:  # a file system without links: a look first, then the rename
            if dest.exists():
                return False
            os.replace(part, dest)
        return True
    finally:
        part.unlink(missing_ok=True)


def _placed(files: Mapping[str, str | bytes | Path], others: Sequence[str]) -> dict[str, bytes]:
    """The paths placed from the host: ``files`` with their contents, ``others`` with none."""
    placed = {path: b"" for path in others}
    for path, value in files.items():
        if isinstance(value, Path):
            placed[path] = value.read_bytes()
        else:
            placed[path] = value.encode() if isinstance(value, str) else value
    return placed


class WorkspaceCache:
    """Snapshots of the workspace before any agent, one file per key, in ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def key(
        image_id: str | None,
        workspace: PurePosixPath,
        limits: ReadLimits,
        setup: Sequence[ExecInput],
        placed: Mapping[str, bytes],
    ) -> str | None:
        """A name for everything that decides the snapshot's files (module docstring).

        ``placed`` holds every path placed from the host (files with their contents;
        directories and mounts with none). ``None``: not to be cached (no image id, or a
        path placed in, over or above the workspace).
        """
        paths = [PurePosixPath(p) for p in placed]
        near = (p == workspace or workspace in p.parents or p in workspace.parents for p in paths)
        if not image_id or any(near):
            return None
        digest = hashlib.sha256()
        for path in sorted(placed):
            digest.update(hashlib.sha256(path.encode()).digest())
            digest.update(hashlib.sha256(placed[path]).digest())
        parts = {
            "image": image_id,
            "workspace": str(workspace),
            "limits": limits.model_dump(mode="json"),
            "setup": [step.model_dump(mode="json") for step in setup],
            "placed": digest.hexdigest(),
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.tar"

    def read(self, key: str) -> bytes | None:
        """The snapshot kept under ``key``; ``None``: none, or it cannot be read."""
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            log.warning("workspace cache unreadable; reading the sandbox", error=str(err))
            return None

    def keep(self, key: str, tar: bytes) -> None:
        """Keep ``tar`` (a snapshot just read) under ``key``; a failure is only logged."""
        try:
            _publish(self._path(key), tar, replace=True)
        except OSError as err:
            log.warning("workspace cache not kept", error=str(err))


async def cache_slot(
    cache: WorkspaceCache | None,
    sandbox: Sandbox,
    workspace: PurePosixPath,
    limits: ReadLimits,
    setup: Sequence[ExecInput],
    files: Mapping[str, str | bytes | Path],
    others: Sequence[str],
) -> tuple[WorkspaceCache, str] | None:
    """Where the sandbox's workspace snapshot may be cached, and its key; ``None``: it is not.

    ``files`` were placed from the host with their contents, ``others`` (directories,
    mounts) too; the image is the one the sandbox runs, as its backend says.
    """
    if cache is None:
        return None
    placed = await asyncio.to_thread(_placed, files, others)
    image = await sandbox.image_id()
    key = WorkspaceCache.key(image, workspace, limits, setup, placed)
    return (cache, key) if key else None


async def snapshot_workspace(
    sandbox: Sandbox,
    workspace: PurePosixPath,
    limits: ReadLimits,
    dest: Path,
    cache: tuple[WorkspaceCache, str] | None = None,
) -> None:
    """Write the workspace's snapshot (a tar under ``workspace/``) to ``dest``, if absent.

    From ``cache`` (the cache and the key) when it holds one; else read from the sandbox,
    and kept there when this call's snapshot is the one published.
    """
    if cache is not None:
        kept = await asyncio.to_thread(cache[0].read, cache[1])
        if kept is not None:
            await asyncio.to_thread(_publish, dest, kept, replace=False)
            return
    read = await sandbox.read_tree(str(workspace), limits=limits)
    tar = await asyncio.to_thread(
        pack, ((PurePosixPath("workspace", k), v) for k, v in read.files.items())
    )
    first = await asyncio.to_thread(_publish, dest, tar, replace=False)
    if first and cache is not None:
        await asyncio.to_thread(cache[0].keep, cache[1], tar)
