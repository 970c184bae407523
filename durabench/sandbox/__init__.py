"""Sandboxes: the ABC, the backend registry, the Docker and the Daytona backends.

The Daytona backend registers when its SDK (the ``daytona`` extra) is installed.
"""

import contextlib

from durabench.sandbox.base import ExecResult, Sandbox, SandboxSpec
from durabench.sandbox.docker import (
    DockerSandbox,
    docker_client,
    ensure_agent_image,
    ensure_image,
    image_id,
    image_tag,
    shared_docker_client,
)
from durabench.sandbox.registry import get_backend, known_backends, sandbox_backend

with contextlib.suppress(ImportError):  # the SDK is an optional extra: registers "daytona"
    import durabench.sandbox.daytona  # noqa: F401

__all__ = [
    "DockerSandbox",
    "ExecResult",
    "Sandbox",
    "SandboxSpec",
    "docker_client",
    "ensure_agent_image",
    "ensure_image",
    "get_backend",
    "image_id",
    "image_tag",
    "known_backends",
    "sandbox_backend",
    "shared_docker_client",
]
