"""Host admission against a real daemon: reservations, labelled containers, restarts."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import docker
import pytest

from durabench.sandbox.docker.capacity import (
    FLOOR_LABEL,
    HOST_LABEL,
    HostCapacity,
    MemoryRule,
    attempt_key,
)
from durabench.sandbox.docker.cgroup_count import cgroup_memory_mib
from durabench.sandbox.docker.memory_admission import MemoryBudget
from durabench.settings.values import Settings

pytestmark = pytest.mark.docker


def _labels(task: str) -> dict[str, str]:
    return {
        "durabench.run": "cap",
        "durabench.task": task,
        "durabench.lane": "baseline",
        "durabench.attempt": "1",
    }


def test_a_host_admits_up_to_its_limit_across_restarts(tmp_path: Path) -> None:
    client = docker.from_env()
    host = f"cap-{uuid.uuid4().hex[:8]}"
    image = os.environ.get("DURABENCH_BASE_IMAGE", Settings.from_env().base_image)
    state = tmp_path / "hosts" / f"{host}.json"
    a, b, c = (attempt_key(_labels(t)) for t in "abc")
    try:
        capacity = HostCapacity(client, host, limit=2, state_file=state)
        assert capacity.claim(a) and capacity.claim(a)  # a retried claim counts once
        assert capacity.claim(b) and not capacity.claim(c)
        # A restarted worker remembers b, still building its image.
        assert HostCapacity(client, host, limit=2, state_file=state).holders() == {a, b}
        # a's container exists (its second placement, after a move): it counts once.
        client.containers.run(
            image,
            entrypoint=["sleep", "infinity"],
            command=[],
            name=f"{host}-a-p1",
            labels={**_labels("a"), HOST_LABEL: host},
            network_mode="none",
            detach=True,
        )
        capacity.provisioned(a)
        restarted = HostCapacity(client, host, limit=2, state_file=state)
        assert restarted.holders() == {a, b} and not restarted.claim(c)
        restarted.release(b)  # b's attempt ended before it had a container
        assert restarted.claim(c)
        client.containers.get(f"{host}-a-p1").remove(force=True)
        restarted.release(a)
        assert restarted.holders() == {c}
    finally:
        for found in client.containers.list(all=True, filters={"label": f"{HOST_LABEL}={host}"}):
            found.remove(force=True)
        client.close()


def test_a_claim_whose_attempt_never_came_lapses_soon(tmp_path: Path) -> None:
    """A claim whose reply was lost sends its attempt to claim again, maybe elsewhere: the
    slot it took here is held only until a provision would have come (15 minutes), not
    for an image build's 4 hours; one whose provision came holds for the build."""
    now = [1_000_000.0]
    client = docker.from_env()
    host = f"cap-{uuid.uuid4().hex[:8]}"
    state = tmp_path / "hosts" / f"{host}.json"
    a, b, c = (attempt_key(_labels(t)) for t in "abc")
    try:
        capacity = HostCapacity(client, host, limit=1, state_file=state, clock=lambda: now[0])
        assert capacity.claim(a) and not capacity.claim(b)
        now[0] += 16 * 60  # a's provision never came here
        assert capacity.claim(b)
        capacity.arrived(b)  # b's provision began: its image may build for hours
        now[0] += 3 * 3600
        assert not capacity.claim(c)
        now[0] += 3600 + 1
        assert capacity.claim(c)
    finally:
        client.close()


def test_a_host_admits_by_the_memory_its_containers_hold(tmp_path: Path) -> None:
    """A container holding 48 MiB (a file in its /dev/shm, charged to its cgroup) is counted
    at what it holds, measured: beside it a 60 MiB newcomer fits in 200 MiB, not in 100."""
    client = docker.from_env()
    host = f"mem-{uuid.uuid4().hex[:8]}"
    image = os.environ.get("DURABENCH_BASE_IMAGE", Settings.from_env().base_image)
    a, b = (attempt_key(_labels(t)) for t in "ab")
    try:
        made = client.containers.run(
            image,
            entrypoint=["sh", "-c", "head -c 50331648 /dev/zero > /dev/shm/held; sleep infinity"],
            command=[],
            name=f"{host}-a",
            labels={**_labels("a"), HOST_LABEL: host, FLOOR_LABEL: "0"},
            network_mode="none",
            shm_size="64m",
            detach=True,
        )
        made.reload()
        held = 0.0
        for _ in range(100):  # until the file is written
            held = cgroup_memory_mib(str(made.id), made.attrs) or 0.0
            if held >= 48:
                break
            time.sleep(0.1)
        if cgroup_memory_mib(str(made.id), made.attrs) is None:
            pytest.skip("this daemon's cgroups are not readable here")
        assert 48 <= held < 100

        def capacity(usable_mib: float) -> HostCapacity:
            rule = MemoryRule(MemoryBudget(usable_mib=usable_mib, growth_mib=0), 60)
            return HostCapacity(client, host, 10, tmp_path / f"{usable_mib}.json", memory=rule)

        assert not capacity(100).claim(b)  # 48 held + 60 for b: over 100
        assert capacity(200).claim(b)
        assert capacity(100).claim(a)  # a holds its claim: admitted again, whatever it holds
    finally:
        for found in client.containers.list(all=True, filters={"label": f"{HOST_LABEL}={host}"}):
            found.remove(force=True)
        client.close()


def test_reservations_count_at_their_agents_floor(tmp_path: Path) -> None:
    """Attempts admitted, their images still building: each counts at its own floor, or
    the growth allowance if more (100 MiB to hand out, 10 of growth)."""
    client = docker.from_env()
    host = f"floor-{uuid.uuid4().hex[:8]}"
    rule = MemoryRule(MemoryBudget(usable_mib=100, growth_mib=10), default_floor_mib=1000)
    a, b, c = (attempt_key(_labels(t)) for t in "abc")
    try:
        capacity = HostCapacity(client, host, 10, tmp_path / "r.json", memory=rule)
        assert capacity.claim(a, 60)  # an empty host admits one
        assert not capacity.claim(b, 50)  # 60 + 50 = 110
        assert capacity.claim(b, 30)  # 60 + 30 = 90
        assert not capacity.claim(c, 11)  # 90 + 11 = 101
        assert capacity.claim(c, 0)  # 90 + the growth allowance 10 = 100
        capacity.release(a)
        capacity.release(c)
        assert not capacity.claim(c)  # no floor named: the default, 30 + 1000
        assert capacity.claim(c, 70)  # 30 + 70 = 100
    finally:
        client.close()
