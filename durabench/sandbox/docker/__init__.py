"""The Docker sandbox backend: containers, task images, error translation."""

from durabench.sandbox.docker.agent_images import ensure_agent_image
from durabench.sandbox.docker.capacity import docker_admission
from durabench.sandbox.docker.errors import docker_client, map_docker_errors, shared_docker_client
from durabench.sandbox.docker.images import ensure_image, image_id, image_tag
from durabench.sandbox.docker.sandbox import DockerSandbox

__all__ = [
    "DockerSandbox",
    "docker_admission",
    "docker_client",
    "ensure_agent_image",
    "ensure_image",
    "image_id",
    "image_tag",
    "map_docker_errors",
    "shared_docker_client",
]
