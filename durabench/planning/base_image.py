"""The base image every task image is built from: here, or pullable, before approval.

Task Dockerfiles start ``FROM ${BASE_IMAGE}`` (``DURABENCH_BASE_IMAGE``). Where it is
neither in the local daemon nor pullable (a machine with no registry, or behind a proxy
Docker does not use), an approved run fails every build, retries each with backoff for
minutes and ends having measured nothing. Asked here, the registry answers in well under
a second or not at all, so the wait is bounded to a few seconds.
"""

from __future__ import annotations

import docker.errors
import requests

from durabench.errors import ConfigError
from durabench.sandbox import docker_client

__all__ = ["REGISTRY_TIMEOUT_S", "check_base_image"]

REGISTRY_TIMEOUT_S = 5
"""How long the registry may take to describe the image before it counts as unreachable."""


def check_base_image(image: str) -> None:
    """Accept ``image`` if the local daemon has it or its registry describes it.

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
            raise _cannot_pull(image, exc) from exc
    finally:
        client.close()


def _cannot_pull(image: str, exc: Exception) -> ConfigError:
    said = getattr(exc, "explanation", None) or str(exc) or type(exc).__name__
    why = str(said).splitlines()[0][:200]
    return ConfigError(
        f"base image {image} is not in the local Docker and cannot be pulled ({why}); "
        "build one without a registry with `scripts/build-base-image.sh` and set "
        "DURABENCH_BASE_IMAGE=durabench-base:bookworm, or set DURABENCH_BASE_IMAGE to an "
        "image `docker images` lists"
    )
