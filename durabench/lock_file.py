"""The lock file this process's packages were installed from, and its digest.

A run's numbers are only as reproducible as the worker that made them: the plan records
the digest of the planning worker's lock (``requirements.lock``), so a published run
names the exact dependency set, and the commit whose lock has that digest rebuilds it.
The worker image says where its lock is (``DURABENCH_LOCK_FILE``); a source checkout
has it beside the packages.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from durabench.settings.environment import lock_file_named

__all__ = ["LOCK_NAME", "lock_digest", "lock_file"]

LOCK_NAME = "requirements.lock"
"""The lock's name at the top of the repository (made by ``scripts/lock.sh``)."""


def lock_file() -> Path | None:
    """The lock of this install: ``DURABENCH_LOCK_FILE``, else the checkout's; ``None``."""
    path = lock_file_named() or Path(__file__).resolve().parents[1] / LOCK_NAME
    return path if path.is_file() else None


def lock_digest() -> str:
    """``sha256:<hex>`` of :func:`lock_file`; ``""`` when this install has none."""
    path = lock_file()
    return f"sha256:{hashlib.sha256(path.read_bytes()).hexdigest()}" if path else ""
