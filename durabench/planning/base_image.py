"""The base image every task image is built from: here, or pullable, before approval.

Task Dockerfiles start ``FROM ${BASE_IMAGE}`` (``DURABENCH_BASE_IMAGE``). Where it is
neither in the local daemon nor pullable (a machine with no registry, or behind a proxy
Docker does not use), an approved run fails every build, retries each with backoff for
minutes and ends having measured nothing. Asked here, the registry answers in well under
a second or not at all, so the wait is bounded to a few seconds.
"""

from __future__ import annotations

from pathlib import Path

import docker.errors
import requests

from durabench.errors import ConfigError
from durabench.sandbox import docker_client

__all__ = ["REGISTRY_TIMEOUT_S", "base_image_refusal", "check_base_image"]

REGISTRY_TIMEOUT_S = 5
"""How long the registry may take to describe the image before it counts as unreachable."""


def check_base_image(image: str, config: Path) -> None:
    """Accept ``image`` if the local daemon has it or its registry describes it.

    ``config``: the home's ``config.toml``, where the refusal says to name another image.

    Raises:
        DockerUnavailable: no Docker daemon answers.
        ConfigError: the image can be neither found nor pulled; the message names the fix.
    """
    client = docker_client()
    try:
        try:
            client.images.get(image)
            return
        except docker.errors.ImageNotFound:
            pass
        client.api.timeout = REGISTRY_TIMEOUT_S
        try:
            client.api.inspect_distribution(image)  # type: ignore[no-untyped-call]
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise _cannot_pull(image, exc, config) from exc
    finally:
        client.close()


def _cannot_pull(image: str, exc: Exception, config: Path) -> ConfigError:
    said = getattr(exc, "explanation", None) or str(exc) or type(exc).__name__
    return base_image_refusal(image, str(said).splitlines()[0][:200], config)


def base_image_refusal(image: str, why: str, config: Path) -> ConfigError:
    """The refusal of a base image that cannot be had: the fix is kept in ``config``.

    An ``export`` would be lost with the shell; the config file is read by every command
    and worker of this home.
    """
    return ConfigError(
        f"base image {image} is not in the local Docker and cannot be pulled ({why}); "
        "build one without a registry with `scripts/build-base-image.sh` (as root), then "
        f'add the line base_image = "durabench-base:bookworm" to {config} (or name there '
        "an image `docker images` lists; DURABENCH_BASE_IMAGE overrides it for one shell)"
    )
