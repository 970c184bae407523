"""Every worker of a host derives the same placeholder for an attempt, even when two start
together: the signing key is seen whole or not at all, never half written.

A placeholder read with another key than the one the sandbox was given would be good for
nothing: the agent's requests would be refused as if its key were wrong.
"""

from __future__ import annotations

import secrets
import threading
from pathlib import Path

import pytest

from durabench.gateway import GrantStore


def test_two_workers_making_the_key_at_once_agree_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first_inside, let_first_go = threading.Event(), threading.Event()
    real = secrets.token_bytes
    calls = 0

    def token_bytes(n: int) -> bytes:  # the first worker is paused while it makes the key
        nonlocal calls
        calls += 1
        if calls == 1:
            first_inside.set()
            let_first_go.wait(timeout=30)
        return real(n)

    monkeypatch.setattr(secrets, "token_bytes", token_bytes)
    keys: dict[str, bytes] = {}

    def worker(name: str) -> None:
        keys[name] = GrantStore(tmp_path)._signing_key()

    first = threading.Thread(target=worker, args=("first",))
    first.start()
    assert first_inside.wait(timeout=30)
    worker("second")  # starts while the first is making the key
    let_first_go.set()
    first.join(timeout=30)
    assert len(keys["second"]) == 32 and keys["first"] == keys["second"]
