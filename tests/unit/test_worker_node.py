"""Two worker containers that share a host name are not one container's two lives.

Replicas with ``network_mode: host`` take the host's name, each in its own pid
namespace: named by the host name alone, each took the other for an earlier life of
itself, dead, and failed the attempts the other was running. A container is named by
its id, from the bind mounts Docker makes for it (``/etc/hostname`` and its kin under
``/var/lib/docker/containers/<id>/``), and only outside a container by the node name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import worker_place
from runtime.worker_place import WorkerPlace, dead_peer, identity_at, this_place

A = "a" * 64
B = "b" * 64


def _mountinfo(container: str) -> str:
    return (
        "1 0 0:1 / / rw - overlay overlay rw\n"
        f"2 1 8:1 /var/lib/docker/containers/{container}/hostname /etc/hostname rw - ext4 "
        "/dev/sda1 rw\n"
    )


def _place_in(container: str | None, monkeypatch: pytest.MonkeyPatch, pid_ns: str) -> WorkerPlace:
    real = worker_place._read

    def read(path: Path | str) -> str:
        if str(path) == "/proc/self/mountinfo":
            return _mountinfo(container) if container else "1 0 0:1 / / rw - ext4 /dev/sda1 rw\n"
        return real(path)

    monkeypatch.setattr(worker_place, "_read", read)
    monkeypatch.setattr(worker_place.socket, "gethostname", lambda: "the-host")
    return this_place()._replace(pid_ns=pid_ns)


def test_sibling_containers_with_the_host_s_name_are_not_taken_for_dead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = _place_in(A, monkeypatch, pid_ns="111")
    second = _place_in(B, monkeypatch, pid_ns="222")
    assert first.node != second.node
    assert not dead_peer(identity_at(first, "h1"), "h1", here=second)


def test_a_restarted_container_still_knows_its_earlier_life(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _place_in(A, monkeypatch, pid_ns="111")
    after = _place_in(A, monkeypatch, pid_ns="333")  # the same container, started again
    assert dead_peer(identity_at(before, "h1"), "h1", here=after)


def test_outside_a_container_the_node_name_names_the_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = _place_in(None, monkeypatch, pid_ns="111")
    two = _place_in(None, monkeypatch, pid_ns="111")
    assert one.node == two.node
