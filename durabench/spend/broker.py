"""A worker's side of its host's purses: ask the book for blocks, report, give back.

The gateway cannot reach the deployment (it holds no Temporal client, and should not):
it says what it wants in each capped run's ``used.json``. A worker of the host reads it
every :data:`TEND_S` and talks to the run's book for it (:func:`tend`), under a lock
file, so the workers sharing a gateway take turns:

* a request waits for more (``want``): ask for it; write the new block to ``held.json``
  (or, refused, the want that was refused, so the gateway refuses at once); a want in a
  file older than :data:`~durabench.spend.purse.WAIT_S` is no request's (its gateway
  stopped while one waited) and is not asked for;
* no attempt of the run holds a grant here any more and nothing is in flight: give back
  what the host holds beyond its spending (``held.json`` first, so the gateway can hold
  no more of it, then the report; a ``used.json`` that changed meanwhile means a request
  took from the block as it went, and the block is kept for a later look);
* its spending changed: report it (the book starts pairs by what they spent).

Every report says what ``held.json`` holds: a block granted whose answer was lost on the
way is never written, and the next report gives it back.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

from durabench.spend.book import BlockAnswer, HostReport
from durabench.spend.purse import WAIT_S, Held, SpendFiles

__all__ = ["TEND_S", "Ask", "Tended", "tend"]

TEND_S = 0.25
"""How often a worker looks at its host's purses."""

Ask = Callable[[HostReport], Awaitable[BlockAnswer]]
"""Sends a host's report to its run's book; the book's answer."""


class Tended:
    """What this worker last reported per run: a report is sent only when it changes."""

    def __init__(self) -> None:
        """Nothing reported yet."""
        self.reported: dict[str, HostReport] = {}


@contextlib.contextmanager
def _turn(directory: Path) -> Iterator[bool]:
    """Whether this worker has the run's lock (another worker of the host may be tending)."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


async def tend(files: SpendFiles, host: str, live: bool, ask: Ask, tended: Tended) -> None:
    """One look at a run's purse on this host; at most one report to its book.

    ``live``: an attempt of the run holds a grant at this host's gateway.
    """
    with _turn(files.dir) as mine:
        if not mine:
            return
        try:
            await _tend(files, host, live, ask, tended)
        except BaseException:
            # The book may have taken a report whose answer never came: send the next one.
            tended.reported.pop(files.run_id, None)
            raise


async def _tend(files: SpendFiles, host: str, live: bool, ask: Ask, tended: Tended) -> None:
    held, used = files.held(), files.used()
    read = used
    if used.want > 0 and files.used_age() > WAIT_S:
        # No request waits this long: its gateway stopped while one waited.
        used = used.model_copy(update={"want": 0})
    spent = sum(used.spent.values())
    report = HostReport(host=host, held=held.held, spent=used.spent)
    if used.want > 0 and held.held > used.seen:
        return  # the gateway has not yet taken the last block: its want predates it
    if used.want > 0:
        answer = await ask(report.model_copy(update={"want": used.want}))
        refused = used.asked if answer.exhausted else held.refused
        # A refusal changes nothing the gateway may spend: only a grant is written as one.
        new = answer.held if answer.granted else held.held
        files.write_held(Held(run_id=files.run_id, held=new, refused=refused))
        tended.reported[files.run_id] = report.model_copy(update={"held": new})
        return
    if not live and used.reserved == 0 and held.held > spent:
        files.write_held(Held(run_id=files.run_id, held=spent, refused=held.refused))
        if files.used() != read:
            # The gateway took from the block while it was being given back: keep it,
            # and give back on a later look, from what it holds then.
            files.write_held(held)
            return
        report = report.model_copy(update={"held": spent})
    if tended.reported.get(files.run_id) != report:
        await ask(report)
        tended.reported[files.run_id] = report
