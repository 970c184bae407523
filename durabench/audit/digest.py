"""Hashes of what a run wrote, taken when it is recorded and again when it is audited.

The writer returns them into Temporal history (``record_attempt`` an attempt's,
``write_report`` the run's own files); the audit takes them again and holds one against the
other. Both sides list a directory the same way (:func:`listing`): every entry that is not a
directory, links included and never followed, so nothing under a run is left out.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from durabench import __version__
from durabench.models.audit import DIGESTED_FILES, AttemptDigest, FileDigest, Manifest

__all__ = ["digest_attempt", "file_digest", "file_hashes", "listing", "manifest_of", "sha256_file"]

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str | None:
    """The sha256 (hex) of ``path``'s bytes, read in chunks; ``None`` if it is no file."""
    if not path.is_file():
        return None
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def file_hashes(directory: Path) -> dict[str, str | None]:
    """Each of :data:`DIGESTED_FILES` under ``directory`` to its hash (``None``: absent)."""
    return {name: sha256_file(directory / name) for name in DIGESTED_FILES}


def listing(directory: Path, *, deep: bool = True) -> dict[str, Path]:
    """Every entry under ``directory`` but directories, by relative POSIX path.

    Links (to files or directories) are entries, never followed; ``deep=False`` lists
    ``directory``'s own entries only.
    """
    found: dict[str, Path] = {}
    for top, dirs, files in os.walk(directory, followlinks=False):
        here = Path(top)
        links = [d for d in dirs if (here / d).is_symlink()]
        for name in (*files, *links):
            found[(here / name).relative_to(directory).as_posix()] = here / name
        if not deep:
            break
    return dict(sorted(found.items()))


def file_digest(path: Path) -> FileDigest | None:
    """Size and hash of the regular file ``path``; ``None`` for a link or anything else."""
    if path.is_symlink() or not path.is_file():
        return None
    return FileDigest(size=path.stat().st_size, sha256=sha256_file(path) or "")


def manifest_of(directory: Path, *, deep: bool = True) -> Manifest:
    """Every regular file under ``directory`` (its own only, ``deep=False``), digested."""
    out = {}
    for name, path in listing(directory, deep=deep).items():
        digest = file_digest(path)
        if digest is not None:
            out[name] = digest
    return out


def digest_attempt(directory: Path) -> AttemptDigest:
    """The digest of the attempt in ``directory``, as its worker wrote it."""
    return AttemptDigest(
        files=file_hashes(directory), durabench_version=__version__, manifest=manifest_of(directory)
    )
