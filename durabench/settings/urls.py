"""Where the service client may send, checked before any request leaves the worker.

The service is trusted with grades, not with the worker's network. Two URLs come from
outside the worker:

- The base URL (``--service-url``) gets the service key on every call, so plain ``http``
  is allowed only on loopback (a local or test service): anywhere else the key would cross
  the network in clear text.
- The presigned upload URL comes in the service's answer, and the worker PUTs an attempt's
  file there. Used as given, a careless or hostile service could aim that PUT at the
  worker's own loopback ports or at a cloud metadata endpoint (169.254.169.254). So it must
  be ``https``; it may not be an IP literal outside the public address space (private,
  link-local, unspecified, multicast, reserved, shared); and it may be loopback (``http``
  then allowed) only when the service itself is on loopback, as the test service is.

Host names are not resolved: a name whose DNS answer is a private address passes, and
stopping that would take a check at connect time. The legacy numeric IPv4 forms the system
resolver reads as addresses (``2852039166``, ``0xa9fea9fe``) are read as addresses here too.
"""

from __future__ import annotations

import re
import socket
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import NamedTuple
from urllib.parse import urlsplit

from durabench.errors import ConfigError, UploadUrlRefused

__all__ = ["check_service_url", "check_upload_url"]

_Address = IPv4Address | IPv6Address

_LEGACY_IPV4 = re.compile(r"[0-9][0-9a-fx.]*")
"""What ``inet_aton`` may read as an IPv4 address: digits, dots and hex."""

_SEND_NOTHING = (
    "the artifact was not sent; ask the service's operator for https URLs of its public "
    "storage, then grade the attempt again (python -m starter score)"
)


class _Url(NamedTuple):
    """A URL read for checking."""

    scheme: str
    """Lower-cased."""
    host: str
    """Lower-cased, without brackets or a trailing dot; empty when there is none."""
    address: _Address | None
    """The host as an IP address, when it is one (IPv4-mapped IPv6 as IPv4)."""
    shown: str
    """Scheme, host, port and path: no user info, query or fragment (a presigned URL's
    query holds its signature), so it may go into a message."""


def _legacy_ipv4(host: str) -> IPv4Address | None:
    if not _LEGACY_IPV4.fullmatch(host):
        return None
    try:
        return IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def _address(host: str) -> _Address | None:
    """The host as an IP address, or ``None`` for a name.

    Raises:
        ValueError: it looks like an IPv6 address and is not one.
    """
    try:
        found = ip_address(host)
    except ValueError:
        if ":" in host:
            raise
        return _legacy_ipv4(host)
    if isinstance(found, IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped  # a dual-stack socket reaches the IPv4 address itself
    return found


def _read(url: str) -> _Url | None:
    """The parts the checks need, or ``None`` when the URL cannot be read at all."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - reading it raises ValueError for a port that is no number
        host = (parts.hostname or "").rstrip(".")
        address = _address(host) if host else None
    except ValueError:
        return None
    where = parts.netloc.rpartition("@")[2]
    shown = f"{parts.scheme}://{where}{parts.path}" if where else f"{parts.scheme}:{parts.path}"
    return _Url(parts.scheme, host, address, shown)


def _is_loopback(url: _Url) -> bool:
    """``localhost`` and its subdomains (RFC 6761), 127.0.0.0/8 and ``::1``."""
    if url.address is not None:
        return url.address.is_loopback
    return url.host == "localhost" or url.host.endswith(".localhost")


def _not_public(address: _Address) -> str | None:
    """What kind of non-public address this is, or ``None`` for a public one."""
    kinds = (
        ("unspecified", address.is_unspecified),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
        ("non-public", not address.is_global),  # shared space (100.64/10), NAT64 and the like
    )
    return next((kind for kind, found in kinds if found), None)


def check_service_url(url: str) -> None:
    """Refuse a service base URL that would send the service key in clear text.

    Args:
        url: The base URL, as the user gave it (``--service-url``).

    Raises:
        ConfigError: it is not an http(s) URL with a host, or it is plain ``http`` to a
            host that is not loopback.
    """
    read = _read(url)
    if read is None or read.scheme not in ("http", "https") or not read.host:
        shown = f" {read.shown!r}" if read else ""
        raise ConfigError(
            f"the service URL{shown} is not an http(s) URL with a host; "
            "pass --service-url https://host[:port]"
        )
    if read.scheme == "http" and not _is_loopback(read):
        raise ConfigError(
            f"the service URL {read.shown} is plain http to {read.host}, which is not loopback: "
            "the service key would cross the network in clear text; use "
            f"https{read.shown.removeprefix('http')} (plain http is allowed only on "
            "127.0.0.1, ::1 or localhost)"
        )


def check_upload_url(url: str, *, service_url: str) -> None:
    """Refuse a presigned upload URL that aims the worker's PUT where no store should be.

    Args:
        url: The presigned URL the service handed out.
        service_url: The service's base URL: a loopback upload URL is allowed only when the
            service is on loopback too.

    Raises:
        UploadUrlRefused: the URL is not https (nor http on loopback), names an IP address
            outside the public space, or is loopback while the service is not. The message
            leaves out the query, which holds the URL's signature.
    """
    read = _read(url)
    if read is None or read.scheme not in ("http", "https") or not read.host:
        shown = read.shown if read else "(unreadable URL)"
        raise UploadUrlRefused(
            f"PUT {shown}: the upload URL the service gave is not an http(s) URL with a "
            f"host; {_SEND_NOTHING}"
        )
    if _is_loopback(read):
        service = _read(service_url)
        if service is None or not _is_loopback(service):
            raise UploadUrlRefused(
                f"PUT {read.shown}: the upload URL points at the worker's own loopback "
                f"({read.host}) while the service is not on loopback; {_SEND_NOTHING}"
            )
        return
    kind = None if read.address is None else _not_public(read.address)
    if kind is not None:
        raise UploadUrlRefused(
            f"PUT {read.shown}: the upload URL points at {read.address}, a {kind} address, "
            "which would let the service reach the worker's own network or a cloud metadata "
            f"endpoint; {_SEND_NOTHING}"
        )
    if read.scheme != "https":
        raise UploadUrlRefused(
            f"PUT {read.shown}: the upload URL is plain http to {read.host}, which is not "
            f"loopback; presigned URLs must be https; {_SEND_NOTHING}"
        )
