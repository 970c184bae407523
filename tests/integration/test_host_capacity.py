"""Host admission against a real daemon: reservations, labelled containers, release."""

from __future__ import annotations

import os
import uuid

import docker
import pytest

from durabench.sandbox.docker.capacity import HOST_LABEL, HostCapacity
from durabench.settings import Settings

pytestmark = pytest.mark.docker


def test_a_host_admits_up_to_its_limit_counting_its_containers() -> None:
    client = docker.from_env()
    host = f"cap-{uuid.uuid4().hex[:8]}"
    image = os.environ.get("DURABENCH_BASE_IMAGE", Settings.from_env().base_image)
    try:
        capacity = HostCapacity(client, host, limit=2)
        assert capacity.claim("a") and capacity.claim("a")  # a retried claim counts once
        assert capacity.claim("b") and not capacity.claim("c")
        # "a" now has its container; a restarted worker (fresh reservations) still counts it.
        client.containers.run(
            image,
            entrypoint=["sleep", "infinity"],
            command=[],
            name=f"a-{host}",
            labels={HOST_LABEL: host},
            network_mode="none",
            detach=True,
        )
        capacity.provisioned("a")
        restarted = HostCapacity(client, host, limit=2)
        assert restarted.holders() == {f"a-{host}"}
        assert restarted.claim("b") and not restarted.claim("c")
        restarted.release("b")  # b's attempt ended before it had a container
        assert restarted.claim("c")
        client.containers.get(f"a-{host}").remove(force=True)
        assert restarted.holders() == {"c"}
    finally:
        for c in client.containers.list(all=True, filters={"label": f"{HOST_LABEL}={host}"}):
            c.remove(force=True)
        client.close()
