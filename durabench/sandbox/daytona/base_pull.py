"""Whether Daytona can pull the base image: asked of the image's registry, as Docker would.

Daytona pulls the base image of a Dockerfile build anonymously: stored registry
credentials apply to images a sandbox starts from, not to a build's ``FROM``. So the base
image must be public. A tag that lives only on a worker's own daemon (the
``durabench-base:bookworm`` that README builds with ``docker import``) is not, and every
build of every attempt would fail at its ``FROM``. The plan asks the registry the name
points at with the registry API's own handshake (``HEAD`` of the manifest; on a ``401``
an anonymous token from the realm the registry names, then the ``HEAD`` again) and
refuses an image the registry says is absent or private, and a registry on the worker's
own loopback (which Daytona's builders cannot reach) without asking it.

A registry the worker cannot reach (a worker without the internet, a registry that
fails) proves nothing either way: Daytona may reach it. That is a warning in the plan,
not a refusal. Blocking: called in a thread.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import NoReturn

import httpx
from docker.auth import INDEX_NAME, resolve_repository_name
from docker.utils import parse_repository_tag

from durabench.errors import ConfigError

__all__ = ["Registry", "ask_registry", "challenge_params", "check_base_pullable", "registry_of"]

_DOCKER_HUB = "registry-1.docker.io"
"""Where Docker's client sends ``docker.io`` names."""
_TIMEOUT_S = 10.0
_MANIFESTS = ", ".join(
    (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    )
)
_PARAM = re.compile(r'([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))')
_PREFIX = "Daytona preflight: "
_FIX = (
    "push it to a public registry and set DURABENCH_BASE_IMAGE to that name, or run with "
    "--sandbox docker (a self-hosted Daytona whose builder has the image another way: "
    "DURABENCH_DAYTONA_BASE_CHECK=false)"
)


@dataclass(frozen=True)
class Registry:
    """Where an image's manifest is asked for: the registry's base URL, repository, tag."""

    url: str
    """``https://host[:port]``; ``http://`` for a loopback host, as Docker's default is."""
    repository: str
    """The repository path, ``library/`` added to a bare Docker Hub name."""
    reference: str
    """The tag, ``latest`` when none is named, or a ``sha256:`` digest."""


def registry_of(image: str) -> Registry:
    """The registry, repository and reference Docker's client would pull ``image`` from."""
    name, reference = parse_repository_tag(image)
    host, repository = resolve_repository_name(name)
    if host == INDEX_NAME:
        host = _DOCKER_HUB
        if "/" not in repository:
            repository = f"library/{repository}"
    scheme = "http" if _loopback(host) else "https"
    return Registry(f"{scheme}://{host}", repository, reference or "latest")


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` (with or without its port) as an IP address; ``None``: a name."""
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    try:
        return ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return None


def _loopback(host: str) -> bool:
    address = _address(host)
    return host.split(":")[0] == "localhost" or (address is not None and address.is_loopback)


def _private(host: str) -> bool:
    address = _address(host)
    return address is not None and address.is_private and not address.is_loopback


def challenge_params(header: str) -> dict[str, str]:
    """The ``key="value"`` parameters of a ``WWW-Authenticate`` challenge (never raises)."""
    _, _, rest = header.strip().partition(" ")
    return {
        key.lower(): quoted.replace('\\"', '"') if quoted else bare
        for key, quoted, bare in _PARAM.findall(rest)
    }


def check_base_pullable(image: str) -> str:
    """Accept a base image Daytona can pull anonymously; a warning when it cannot tell.

    Returns:
        ``""`` when the registry serves the image to anyone; otherwise the plan's warning
        naming why the worker could not tell.

    Raises:
        ConfigError: the registry answered that the image is absent or not public.
    """
    where = registry_of(image)
    host = httpx.URL(where.url).host
    if _loopback(host):
        raise ConfigError(
            f"{_PREFIX}Daytona cannot pull the base image {image}: its registry {host} is "
            f"the worker's own loopback, which Daytona's builders do not reach; {_FIX}"
        )
    if _private(host):
        return (
            f"the base image {image} is on {host}, a private address: Daytona's cloud "
            "builders do not reach it (a self-hosted Daytona may)"
        )
    return ask_registry(where, image)


def ask_registry(where: Registry, image: str) -> str:
    """Ask ``where`` whether anyone may pull ``image``; see :func:`check_base_pullable`."""
    try:
        with httpx.Client(timeout=_TIMEOUT_S, follow_redirects=True) as client:
            answer = _head(client, where, token=None)
            if answer.status_code == 401:
                token = _anonymous_token(client, where, answer)
                if token is None:
                    _refuse(image, where, answer, "the registry takes no anonymous pulls")
                if isinstance(token, httpx.Response):  # its token service failed
                    return (
                        f"{where.url}'s token service answered {token.status_code} with no "
                        f"token, so whether the base image {image} is public is not known; "
                        "Daytona builds FROM it anonymously"
                    )
                answer = _head(client, where, token=token)
    except httpx.HTTPError as exc:
        return (
            f"could not ask {where.url} whether the base image {image} is public "
            f"({type(exc).__name__}); Daytona builds FROM it anonymously: if it is not "
            "public, every sandbox fails to build"
        )
    status = answer.status_code
    if status < 300:
        return ""
    if status in (401, 403, 404):
        _refuse(image, where, answer, "absent, or not public")
    return (
        f"{where.url} answered {status} for the base image {image}, so whether it is "
        "public is not known; Daytona builds FROM it anonymously"
    )


def _head(client: httpx.Client, where: Registry, token: str | None) -> httpx.Response:
    headers = {"Accept": _MANIFESTS}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    path = f"/v2/{where.repository}/manifests/{where.reference}"
    return client.head(f"{where.url}{path}", headers=headers)


def _anonymous_token(
    client: httpx.Client, where: Registry, answer: httpx.Response
) -> str | httpx.Response | None:
    """A pull token from the realm a ``Bearer`` challenge names.

    ``None``: none is offered (no ``Bearer`` challenge, or its realm refused anonymous
    tokens: 401, 403). The token service's answer itself when it failed otherwise (busy,
    down, not JSON): that proves nothing about the image.
    """
    challenge = answer.headers.get("www-authenticate", "")
    if not challenge.lower().startswith("bearer "):
        return None  # Basic, or nothing: a login is the only way in
    params = challenge_params(challenge)
    realm = params.get("realm", "")
    if not realm.startswith(("https://", "http://")):
        return None
    scope = params.get("scope") or f"repository:{where.repository}:pull"
    query = {"scope": scope, **({"service": params["service"]} if "service" in params else {})}
    issued = client.get(realm, params=query)
    if issued.status_code in (401, 403):
        return None
    if issued.status_code >= 300:
        return issued
    try:
        body = issued.json()
    except ValueError:
        return issued
    token = body.get("token") or body.get("access_token") if isinstance(body, dict) else None
    return token if isinstance(token, str) and token else issued


def _refuse(image: str, where: Registry, answer: httpx.Response, why: str) -> NoReturn:
    raise ConfigError(
        f"{_PREFIX}Daytona cannot pull the base image {image}: {where.url} answered "
        f"{answer.status_code} for {where.repository}:{where.reference} ({why}), and Daytona "
        f"pulls a build's base image anonymously; {_FIX}"
    )
