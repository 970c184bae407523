"""One host's share of a run's spend cap: the block it holds, reserved from per request.

The gateway keeps a :class:`Purse` per run. Each priced request reserves its worst case
before it goes out, and only when the host's spending, what its requests in flight hold
and this worst case together fit in the block; the answer settles it with what the API
reported. So the requests of one host never spend past its block, and the blocks of all
hosts never pass the cap (:mod:`durabench.spend.book`).

Purse and worker meet in two small files per run under the gateway's store
(:class:`SpendFiles`): ``held.json``, written by the worker's broker only (the block the
book granted this host), and ``used.json``, written by the gateway only (its spending by
task, what it holds in flight, and what a waiting request asks for). Each has one writer,
each is written whole (:func:`durabench.atomic.atomic_write`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from durabench.atomic import atomic_write

__all__ = ["WAIT_S", "Held", "Hold", "Purse", "SpendFiles", "Used"]

_M = TypeVar("_M", bound=BaseModel)

WAIT_S = 30.0
"""How long a request waits for a larger block before it is refused: a ``want`` in a
``used.json`` older than this is no request's any more (its gateway stopped)."""


class Held(BaseModel):
    """``held.json``: what the host may spend for the run, as the book granted it."""

    run_id: str
    held: int = Field(default=0, ge=0)
    """Micro-dollars the host's gateway may have spent or reserved at once."""
    refused: int = Field(default=0, ge=0)
    """The last ask (``Used.asked``) the book refused: a request that began waiting at or
    before it is refused at once (0: none was refused)."""


class Used(BaseModel):
    """``used.json``: what the host's gateway has done with its block."""

    run_id: str
    spent: dict[str, int] = Field(default_factory=dict)
    """Micro-dollars charged, by task id."""
    reserved: int = 0
    """Micro-dollars held by requests in flight."""
    want: int = 0
    """Micro-dollars the waiting requests need beyond the block (0: none waits)."""
    asked: int = 0
    """Requests that have waited for a block, counted: the number of the latest ask."""
    seen: int = 0
    """The block (``Held.held``) the gateway had read when it wrote this: a larger block
    since then is one it has not used yet, and ``want`` is not yet reckoned against it."""


class SpendFiles:
    """The run's two files under ``root`` (the gateway's grant store)."""

    def __init__(self, root: Path, run_id: str) -> None:
        """Files of ``run_id`` (named by its hash: a run id is no path)."""
        self.run_id = run_id
        self.dir = root / "spend" / hashlib.sha256(run_id.encode()).hexdigest()[:24]

    @staticmethod
    def runs(root: Path) -> list[Path]:
        """Every run's directory under ``root``."""
        return sorted(p for p in (root / "spend").glob("*") if p.is_dir())

    @classmethod
    def at(cls, directory: Path) -> SpendFiles | None:
        """The files in ``directory``, if one of them names the run."""
        named = _read(directory / "held.json", Held) or _read(directory / "used.json", Used)
        if named is None:
            return None
        return cls(directory.parents[1], named.run_id)

    def held(self) -> Held:
        """The block granted (nothing, before the broker's first write)."""
        return _read(self.dir / "held.json", Held) or Held(run_id=self.run_id)

    def write_held(self, held: Held) -> None:
        """The broker writes the block."""
        atomic_write(self.dir / "held.json", held.model_dump_json())

    def used(self) -> Used:
        """What the gateway has spent and holds (nothing, before its first write)."""
        return _read(self.dir / "used.json", Used) or Used(run_id=self.run_id)

    def used_age(self) -> float:
        """Seconds since the gateway last wrote ``used.json`` (0: never)."""
        try:
            return max(0.0, time.time() - (self.dir / "used.json").stat().st_mtime)
        except OSError:
            return 0.0

    def write_used(self, used: Used) -> None:
        """The gateway writes its spending."""
        atomic_write(self.dir / "used.json", used.model_dump_json())


def _read(path: Path, model: type[_M]) -> _M | None:
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None


@dataclass
class Hold:
    """Micro-dollars held for one request until its answer is charged."""

    task: str
    amount: int
    settled: bool = False


@dataclass
class Purse:
    """A run's spending on this host: the block, what was charged, what is held."""

    held: int = 0
    spent: dict[str, int] = field(default_factory=dict)
    reserved: int = 0

    def room(self) -> int:
        """Micro-dollars of the block neither spent nor held."""
        return self.held - sum(self.spent.values()) - self.reserved

    def reserve(self, task: str, worst: int) -> Hold | None:
        """Hold ``worst`` for a request of ``task``, or ``None`` when the block cannot."""
        if worst > self.room():
            return None
        self.reserved += worst
        return Hold(task, worst)

    def settle(self, hold: Hold | None, charged: int) -> None:
        """The request ended and cost ``charged``: its hold is let go (once)."""
        if hold is None or hold.settled:
            return
        hold.settled = True
        self.reserved -= hold.amount
        self.spent[hold.task] = self.spent.get(hold.task, 0) + charged
