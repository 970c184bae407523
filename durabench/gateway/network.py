"""The sandboxes' only network: internal, no container-to-container traffic, the gateway on it.

An internal Docker bridge has no route off the host, so nothing in a sandbox reaches the
LAN, the internet or a cloud metadata address; with inter-container traffic off, no
sandbox reaches another. The host keeps an address on the bridge (its gateway address),
and that is where the model gateway listens: the one thing a sandbox can talk to.
"""

from __future__ import annotations

import threading

import docker
from docker.errors import APIError, NotFound
from docker.models.networks import Network

from durabench.errors import SandboxError
from durabench.wording import counted

__all__ = ["NETWORK_LABEL", "ensure_gateway_network"]

NETWORK_LABEL = "durabench.network"
_NO_ICC = "com.docker.network.bridge.enable_icc"


_ONE_AT_A_TIME = threading.Lock()
"""This process's attempts check and create one after another (the first makes it)."""


def ensure_gateway_network(client: docker.DockerClient, name: str) -> str:
    """Create the network if needed, healing twins; return the host's address on it.

    Docker before 25 keeps two networks of one name when two creations race (its
    duplicate check is best effort), and then refuses every later use of the name as
    ambiguous. Creations of this process wait for each other; those of other processes
    (workers of one daemon in containers, another home) may still race, so every caller
    then keeps the oldest network of the name (the same one, whoever looks) and removes
    the others, which nothing can be on yet: a name that is ambiguous places no sandbox.

    Raises:
        SandboxError: a network of that name exists and is not internal (it would let
            sandboxes out), twins of the name are both in use, or Docker gave it no
            gateway address.
    """
    with _ONE_AT_A_TIME:
        networks = _named(client, name)
        if not networks:
            try:
                client.api.create_network(
                    name,
                    driver="bridge",
                    internal=True,
                    options={_NO_ICC: "false"},
                    labels={NETWORK_LABEL: "gateway"},
                    check_duplicate=True,
                )
            except APIError:  # another process of this host made it first: fine
                pass
            networks = _named(client, name)
        network = _heal(client, name, networks)
    attrs = network.attrs or {}
    if not attrs.get("Internal"):
        raise SandboxError(
            f"Docker network {name!r} exists and is not internal: sandboxes on it could reach "
            "the LAN and the internet. Remove it (docker network rm) or set "
            "DURABENCH_GATEWAY_NETWORK to another name"
        )
    for config in (attrs.get("IPAM") or {}).get("Config") or []:
        if config.get("Gateway"):
            return str(config["Gateway"])
    raise SandboxError(f"Docker network {name!r} has no gateway address for the model gateway")


def _named(client: docker.DockerClient, name: str) -> list[Network]:
    """The networks called exactly ``name`` (Docker's name filter matches substrings)."""
    return [n for n in client.networks.list(names=[name]) if n.name == name]


def _heal(client: docker.DockerClient, name: str, networks: list[Network]) -> Network:
    """The oldest of the networks called ``name``, the others removed.

    Every caller picks the same one (creation time, then id), so two workers healing at
    once never remove each other's keeper. A twin that Docker will not remove has a
    container on it: the name stays ambiguous, and the error says what to do.
    """
    if not networks:
        raise SandboxError(
            f"Docker network {name!r} could not be created nor found; check `docker network "
            "ls` and the daemon's log"
        )
    ordered = sorted(networks, key=lambda n: (str((n.attrs or {}).get("Created", "")), _id(n)))
    keeper, twins = ordered[0], ordered[1:]
    stuck = []
    for twin in twins:
        try:
            client.api.remove_network(_id(twin))
        except NotFound:
            pass
        except APIError:
            stuck.append(_id(twin)[:12])
    if stuck:
        raise SandboxError(
            f"Docker has {counted(len(networks), 'network')} called {name!r} "
            "and sandboxes on more than "
            f"one; no sandbox can be placed by that name. Once those sandboxes end, remove "
            f"the extra ones: docker network rm {' '.join(stuck)}"
        )
    return client.networks.get(_id(keeper))


def _id(network: Network) -> str:
    return str(network.id)
