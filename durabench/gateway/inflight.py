"""The requests a gateway process is serving, as notes on the host: what its death leaves.

A gateway killed mid-request writes nothing more: that request's ledger line never comes,
and the agent only sees its connection cut. So the gateway notes each request before it
sends it on, in a directory of its own process, and removes the note once the request's
ledger line is written. The worker that sees the process end turns each note left into
the outage line of that request's ledger (:mod:`.outage`), whenever it gets to it: the
note names the ledger, so a session that gave up and had its grant revoked before the
worker noticed the death still gets the line, and one that had nothing in flight does not
get it from here.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["CutRequest", "InFlight", "cut_requests", "serving_ledgers"]

_DIR = "inflight"


def _process_dir(root: Path, pid: int) -> Path:
    return root / _DIR / str(pid)


class CutRequest(NamedTuple):
    """A request a gateway process was serving when it ended."""

    ledger: Path
    provider: str
    """The grant's model provider: the outage is the session's, whatever the request was."""
    tokens: int = 0
    """What it held of its attempt's token budget: charged whole, since its answer may
    have been billed and nobody metered it."""


class InFlight:
    """One gateway process's notes: a file per request being served, naming its ledger."""

    def __init__(self, root: Path, pid: int | None = None) -> None:
        self.dir = _process_dir(root, os.getpid() if pid is None else pid)
        shutil.rmtree(self.dir, ignore_errors=True)  # an earlier process of this pid's
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)

    @contextlib.contextmanager
    def serving(self, ledger: Path, provider: str, tokens: int = 0) -> Iterator[None]:
        """Noted while the body runs: from before the request goes out to its ledger line.

        ``tokens``: what it holds of its attempt's budget (its reservation).
        """
        note = self.dir / uuid.uuid4().hex
        doc = {"ledger": str(ledger), "provider": provider, "tokens": tokens}
        note.write_text(json.dumps(doc))
        try:
            yield
        finally:
            note.unlink(missing_ok=True)

    def close(self) -> None:
        """The process ends cleanly: nothing is in flight any more."""
        shutil.rmtree(self.dir, ignore_errors=True)


def cut_requests(root: Path, pid: int) -> list[CutRequest]:
    """What the ended process ``pid`` was serving; its notes are gone afterwards."""
    where = _process_dir(root, pid)
    out = []
    for note in sorted(where.glob("*")) if where.is_dir() else []:
        try:
            doc = json.loads(note.read_text())
            tokens = int(doc.get("tokens", 0))
            out.append(CutRequest(Path(doc["ledger"]), str(doc["provider"]), tokens))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a note cut by the death itself: its request had not gone out
    shutil.rmtree(where, ignore_errors=True)
    return out


def serving_ledgers(root: Path) -> set[str]:
    """The ledgers of every request any gateway process of ``root`` is serving now."""
    found = set()
    for note in (root / _DIR).glob("*/*"):
        try:
            found.add(str(json.loads(note.read_text())["ledger"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # removed as we looked, or half written
    return found
