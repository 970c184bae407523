"""The model gateway as a remote sandbox reaches it: one public address, nothing else.

A Daytona sandbox runs on Daytona's machines and cannot join the worker's internal
Docker network. It reaches the gateway at ``DURABENCH_GATEWAY_PUBLIC_URL``, and its
network allows only that address (Daytona's ``network_allow_list``). The address must
be ``https://`` unless it is a private one (the placeholder token travels in every
request, and is good for its attempt only); see ``docs/daytona.md``.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from durabench.errors import ConfigError

__all__ = ["allow_list_for", "checked_public_url"]


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise ConfigError(
            f"DURABENCH_GATEWAY_PUBLIC_URL names {host}, which does not resolve ({exc}); "
            "give an address Daytona's sandboxes reach"
        ) from exc
    return sorted({ipaddress.ip_address(str(info[4][0])) for info in infos}, key=str)


def checked_public_url(url: str | None) -> str:
    """The gateway's public URL, refused when absent or sent in clear over the internet.

    Raises:
        ConfigError: unset, not http(s), or ``http://`` to a public address.
    """
    if not url:
        raise ConfigError(
            "a Daytona sandbox cannot reach this worker's internal gateway network: set "
            "DURABENCH_GATEWAY_PUBLIC_URL to the gateway's address as Daytona reaches it "
            "(https://, or http:// on a private network), or run with --sandbox docker"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"DURABENCH_GATEWAY_PUBLIC_URL={url!r} is not an http(s) URL")
    if parts.scheme == "http" and not all(a.is_private for a in _addresses(parts.hostname)):
        raise ConfigError(
            f"DURABENCH_GATEWAY_PUBLIC_URL={url!r} is plain http to a public address: the "
            "attempt's token would cross the internet in clear; put TLS in front of the "
            "gateway and give its https:// address"
        )
    return url.rstrip("/")


def allow_list_for(url: str) -> str:
    """Daytona's ``network_allow_list`` for the gateway: its addresses as /32 (or /128)."""
    host = urlsplit(url).hostname or ""
    return ",".join(f"{a}/{a.max_prefixlen}" for a in _addresses(host))
