"""The task token of one activity attempt, for ending that attempt and no later one.

Ending an activity "by id" ends whichever attempt of it runs when the request arrives:
a take-over that described an orphaned attempt, then failed it by id, fails the retry
another worker started meanwhile. A task token names the attempt, and the server
refuses it (not found) once that attempt has ended.

The token is the server's ``temporal.server.api.token.v1.Task`` message; the fields set
here (namespace id, workflow and run id, scheduled event id, attempt, activity id) are
the ones every server since 1.0 reads, and a server must keep reading them: workers hold
tokens across its upgrades. Encoded by hand, as the SDK has no type for it.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["AttemptKey", "task_token"]


class AttemptKey(NamedTuple):
    """One attempt of one activity, as the server keys it."""

    namespace_id: str
    workflow_id: str
    run_id: str
    scheduled_event_id: int
    attempt: int
    activity_id: str


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _text(field: int, value: str) -> bytes:
    data = value.encode()
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _number(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def task_token(key: AttemptKey) -> bytes:
    """The token that names ``key``'s attempt."""
    return b"".join(
        [
            _text(1, key.namespace_id),
            _text(2, key.workflow_id),
            _text(3, key.run_id),
            _number(4, key.scheduled_event_id),
            _number(5, key.attempt),
            _text(6, key.activity_id),
        ]
    )
