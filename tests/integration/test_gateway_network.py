"""The gateway's network is made once per host, however many attempts start at once.

Docker (before 25) accepts two networks of one name, and then answers every later call
by that name "network <name> is ambiguous": a fresh host's first paired run, whose two
lanes both found no network and both made one, ended every attempt ``infra_other``.
Real Docker; each test uses a network name of its own and removes what it made.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import docker
import docker.errors
import pytest

from durabench.gateway.network import ensure_gateway_network

pytestmark = pytest.mark.docker


@pytest.fixture
def client() -> Iterator[docker.DockerClient]:
    c = docker.from_env()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def name(client: docker.DockerClient) -> Iterator[str]:
    """A network name of the test's own; every network of that name removed after."""
    n = f"durabench-test-net-{uuid.uuid4().hex[:8]}"
    try:
        yield n
    finally:
        for net in _named(client, n):
            net.remove()


def _named(client: docker.DockerClient, name: str) -> list[docker.models.networks.Network]:
    return [n for n in client.networks.list(names=[name]) if n.name == name]


def _make(client: docker.DockerClient, name: str) -> None:
    """What an unlocked check-then-create made: a network Docker does not check for twins."""
    client.api.create_network(
        name,
        driver="bridge",
        internal=True,
        options={"com.docker.network.bridge.enable_icc": "false"},
        labels={"durabench.network": "gateway"},
        check_duplicate=False,
    )


def test_two_networks_of_one_name_are_healed_to_one(client: docker.DockerClient, name: str) -> None:
    _make(client, name)
    _make(client, name)
    assert len(_named(client, name)) == 2  # the state a race left: every call is ambiguous

    address = ensure_gateway_network(client, name)

    (kept,) = _named(client, name)
    gateways = [c["Gateway"] for c in kept.attrs["IPAM"]["Config"]]
    assert address in gateways
    # the name now resolves: a sandbox can be placed on it
    assert client.networks.get(name).id == kept.id


def test_sixteen_attempts_at_once_make_one_network_and_agree_on_its_address(
    client: docker.DockerClient, name: str
) -> None:
    start = threading.Barrier(16)
    addresses: list[str] = []
    errors: list[BaseException] = []

    def attempt() -> None:
        mine = docker.from_env()  # each worker thread its own connection, as activities have
        try:
            start.wait()
            addresses.append(ensure_gateway_network(mine, name))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            mine.close()

    threads = [threading.Thread(target=attempt) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    assert len(_named(client, name)) == 1
    assert len(set(addresses)) == 1
