"""Hashes of what an attempt wrote, taken when it is recorded and again when it is audited."""

from __future__ import annotations

import hashlib
from pathlib import Path

from durabench import __version__
from durabench.models.audit import DIGESTED_FILES, AttemptDigest

__all__ = ["digest_attempt", "file_hashes", "sha256_file"]

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


def digest_attempt(directory: Path) -> AttemptDigest:
    """The digest of the attempt in ``directory``, as its worker wrote it."""
    return AttemptDigest(files=file_hashes(directory), durabench_version=__version__)
