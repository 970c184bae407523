"""The gateway's book of what the APIs last said is left, per account and model: a file.

The gateway is a process of its own with no Temporal client, and the account pool that
decides new starts is a workflow; so each answer's reading (:mod:`.room`) goes into
``rooms.json`` in the gateway's directory (atomically, the newest per provider, account
and model, with a 429's wait while it lasts), and the worker's account activities read
it there and carry it to the pool with every lease and release (:func:`read_rooms`).
Another worker of the host reads the same file, as it shares the gateway.
"""

from __future__ import annotations

import json
import logging
import platform
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from durabench.atomic import atomic_write
from durabench.gateway.grants import Grant, GrantStore
from durabench.gateway.request import AgentRequest
from durabench.gateway.room import read_room
from durabench.models.room import RoomReading

__all__ = ["FRESH", "ROOMS_FILE", "RoomBook", "read_rooms"]

ROOMS_FILE = "rooms.json"
FRESH = timedelta(minutes=5)
"""Readings older than this are not carried to the pool: the limits have refilled."""
_MAX_FILE = 1 << 20
"""A rooms file larger than this is not read (it holds a few lines per account)."""
WINDOW_SEC = 60.0
"""A session that sent nothing for this long is not counted as one the API weighs."""
_MAX_KEPT = 512
"""Readings kept at most (accounts x models a host serves is far fewer)."""

log = logging.getLogger(__name__)


class RoomBook:
    """The newest reading per account and model, kept in memory and in ``rooms.json``.

    Each is as of its answer's headers, and keeps a 429's wait while it lasts. Each
    counts the sessions on its account and model this host has passed a request of in
    the last minute whose grant still stands: the sessions the API's numbers already
    weigh (the pool waits for a new one to show before adding more).
    """

    def __init__(self, store: GrantStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.path = store.root / ROOMS_FILE
        self.clock = clock
        self.host = platform.node()[:128]
        self.readings: dict[tuple[str, str, str], RoomReading] = {}
        self.seen: dict[tuple[str, str, str], dict[str, float]] = {}

    def watch(self, grant: Grant, req: AgentRequest) -> None:
        """Read the answer to ``req`` (a model request of ``grant``'s attempt) when it comes."""
        account, model = grant.account or "", req.asked_model() or grant.model

        def answered(status: int, headers: Mapping[str, str], error: str, delay: str) -> None:
            now = self.clock()
            heard = req.answered_at if req.answered_at is not None else now
            reading = read_room(
                grant.provider,
                account,
                model,
                status,
                headers,
                datetime.fromtimestamp(heard, tz=UTC),
                error=error,
                retry_delay=delay,
            )
            sessions = self._count((grant.provider, account, model), grant.attempt, now)
            if reading is not None:
                self.take(reading.model_copy(update={"host": self.host, "sessions": sessions}))

        req.on_room = answered

    def _count(self, key: tuple[str, str, str], attempt: str, now: float) -> int:
        """Sessions of ``key`` seen in the last minute, ``attempt`` now, that still run."""
        seen = self.seen.setdefault(key, {})
        seen[attempt] = now
        for other, at in list(seen.items()):
            if now - at > WINDOW_SEC or not self.store.holds(self.store.token_for(other)):
                del seen[other]
        while len(self.seen) > _MAX_KEPT:
            self.seen.pop(next(iter(self.seen)))
        return len(seen)

    def take(self, reading: RoomReading) -> None:
        """Take ``reading`` into its account and model's; write the book.

        The newer reading's numbers, a 429's wait still ahead of them
        (:meth:`~durabench.models.room.RoomReading.then`), and ``reading``'s count of
        sessions, the host's latest.
        """
        key = (reading.provider, reading.account, reading.model)
        kept = self.readings.pop(key, None)
        if kept is not None:
            reading = kept.then(reading).model_copy(update={"sessions": reading.sessions})
        self.readings[key] = reading
        while len(self.readings) > _MAX_KEPT:
            self.readings.pop(next(iter(self.readings)))
        text = json.dumps([r.model_dump(mode="json") for r in self.readings.values()])
        try:
            atomic_write(self.path, text)
        except OSError as exc:  # a full disk costs the pool news, never an answer
            log.warning("could not write %s: %s", self.path, exc)


def read_rooms(root: Path, now: datetime, fresh: timedelta = FRESH) -> tuple[RoomReading, ...]:
    """The readings in ``root``'s rooms file no older than ``fresh``; none if it is unreadable."""
    path = root / ROOMS_FILE
    try:
        if path.stat().st_size > _MAX_FILE:
            return ()
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return ()
    readings = []
    for item in doc[:_MAX_KEPT] if isinstance(doc, list) else ():
        try:
            reading = RoomReading.model_validate(item)
        except ValidationError:
            continue
        if now - reading.observed_at <= fresh:
            readings.append(reading)
    return tuple(readings)
