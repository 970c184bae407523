"""The sandboxes' only network: internal, no container-to-container traffic, the gateway on it.

An internal Docker bridge has no route off the host, so nothing in a sandbox reaches the
LAN, the internet or a cloud metadata address; with inter-container traffic off, no
sandbox reaches another. The host keeps an address on the bridge (its gateway address),
and that is where the model gateway listens: the one thing a sandbox can talk to.
"""

from __future__ import annotations

import docker
from docker.errors import APIError, NotFound

from durabench.errors import SandboxError

__all__ = ["NETWORK_LABEL", "ensure_gateway_network"]

NETWORK_LABEL = "durabench.network"
_NO_ICC = "com.docker.network.bridge.enable_icc"


def ensure_gateway_network(client: docker.DockerClient, name: str) -> str:
    """Create the network if needed; return the host's address on it.

    Raises:
        SandboxError: a network of that name exists and is not internal (it would let
            sandboxes out), or Docker gave it no gateway address.
    """
    try:
        network = client.networks.get(name)
    except NotFound:
        try:
            client.networks.create(
                name,
                driver="bridge",
                internal=True,
                options={_NO_ICC: "false"},
                labels={NETWORK_LABEL: "gateway"},
            )
        except APIError:  # another worker of this host made it first: fine
            pass
        network = client.networks.get(name)
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
