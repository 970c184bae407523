"""Sandboxes: the ABC, the registry, admission, the Docker and the Daytona backends.

The Daytona backend is imported when first asked for, and only when its SDK (the
``daytona`` extra) is installed: a process that never uses it never loads the SDK.
"""

from durabench.sandbox.admission import (
    Admission,
    AdmissionFacts,
    admitted_sandboxes,
    sandbox_admission,
)
from durabench.sandbox.backend_registry import get_backend, known_backends, sandbox_backend
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

__all__ = [
    "Admission",
    "AdmissionFacts",
    "DockerSandbox",
    "ExecResult",
    "Sandbox",
    "SandboxSpec",
    "admitted_sandboxes",
    "docker_client",
    "ensure_agent_image",
    "ensure_image",
    "get_backend",
    "image_id",
    "image_tag",
    "known_backends",
    "sandbox_admission",
    "sandbox_backend",
    "shared_docker_client",
]
