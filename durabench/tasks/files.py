"""The files of a task directory that may be copied into a sandbox.

A task directory is written by someone else, and its ``tests/`` and ``solution/`` are
copied into the container. A symbolic link such as ``tests/x -> ~/.aws/credentials`` would
carry a file of the worker's host in with them, so the listing refuses every link that
leads out of the task directory.

The rules, for anything under the listed directory:

* regular files are listed;
* a link to a regular file inside the task directory is listed under the link's own name
  (copied, it becomes a file with the target's content);
* a link that leads outside the task directory is refused, whatever it points to;
* a link to a directory is refused even inside the task (following one can loop, or copy
  a directory many times over): replace it with a real directory;
* a link to nothing inside the task is skipped, as copying it would find nothing;
* other special files (pipes, sockets, devices) are refused.

The listed directory itself may be a link, as long as it stays inside the task directory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from durabench.errors import ConfigError

__all__ = ["task_files"]


def task_files(root: Path, *, task_dir: Path | None = None) -> list[Path]:
    """The regular files under ``root`` that may be copied into a sandbox, sorted.

    Paths are under ``root`` as given (``p.relative_to(root)`` is the name to copy to);
    reading one follows its link, if it is one, to a file inside the task.

    Args:
        root: the directory to list, such as ``<task>/tests``; a missing one has no files.
        task_dir: the task directory every link must stay inside; ``root`` when not given.

    Raises:
        ConfigError: a link leads outside the task directory, a link points to a
            directory, a file is not a regular file, or a directory cannot be read; the
            message names the path (and for a link where it points) and what to do.
    """
    boundary = (task_dir if task_dir is not None else root).resolve()
    if root.is_symlink():
        _check_link(root, boundary)
    if not root.is_dir():
        return []
    found: list[Path] = []
    for here, dirs, files in os.walk(root, onerror=_unreadable):  # links to dirs: not walked
        for name in dirs:
            if (Path(here) / name).is_symlink():
                _check_link(Path(here) / name, boundary)
                raise ConfigError(_dir_link(Path(here) / name))
        for name in files:
            path = Path(here) / name
            if _listed(path, boundary):
                found.append(path)
    return sorted(found)


def _listed(path: Path, boundary: Path) -> bool:
    """Whether ``path`` (not a directory) is copied; refuses what must not be."""
    if path.is_symlink():
        target = _check_link(path, boundary)
        if not target.exists():
            return False
        if target.is_dir():
            raise ConfigError(_dir_link(path))
        mode = target.stat().st_mode
    else:
        mode = path.lstat().st_mode
    if not stat.S_ISREG(mode):
        raise ConfigError(
            f"{path} is not a regular file (a pipe, socket or device); a task directory "
            "holds plain files only: remove it"
        )
    return True


def _check_link(link: Path, boundary: Path) -> Path:
    """Where ``link`` resolves to; refused if that is outside ``boundary``."""
    points = os.readlink(link)
    try:
        target = link.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise ConfigError(
            f"{link} -> {points} cannot be followed ({exc}); replace the link with a copy"
        ) from exc
    if not target.is_relative_to(boundary):
        where = points if points == str(target) else f"{points} ({target})"
        raise ConfigError(
            f"{link} is a link to {where}, outside the task directory {boundary}; durabench "
            "would copy that host file into the sandbox: replace the link with a copy of what "
            "the task needs"
        )
    return target


def _dir_link(link: Path) -> str:
    return (
        f"{link} is a link to the directory {os.readlink(link)}; links to directories are "
        "not followed in a task: replace it with a real directory"
    )


def _unreadable(exc: OSError) -> None:
    raise ConfigError(f"{exc.filename}: cannot be read ({exc.strerror}); fix its permissions")
