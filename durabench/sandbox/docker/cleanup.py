"""Finding and removing durabench's containers and task images by label.

The sweeper decides *which* to remove (it asks Temporal what still runs); this module only
lists and removes, so it can be tested against a real daemon without a server.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import docker
import docker.errors

from durabench.sandbox.docker.errors import map_docker_errors

__all__ = [
    "DEPLOYMENT_LABEL",
    "LabelledContainer",
    "labelled",
    "list_containers",
    "listed_containers",
    "remove_container",
    "unused_task_images",
]

TASK_IMAGE_REPO_PREFIX = "durabench-task/"

DEPLOYMENT_LABEL = "durabench.deployment"
"""``<namespace>@<cluster id>`` of the Temporal whose attempt made the container: one
Docker daemon may serve several deployments, and each sweeps only its own."""


class LabelledContainer(NamedTuple):
    """A durabench container and the attempt it belongs to."""

    name: str
    status: str
    run_id: str
    task_id: str
    lane: str
    attempt: int
    placement: int = 0
    """Which placement of its attempt (a move to another host makes a new one)."""
    host: str = ""
    """The worker host that made it (``durabench.host``)."""
    deployment: str = ""
    """The deployment it belongs to (:data:`DEPLOYMENT_LABEL`); empty if made before
    containers were labelled with one."""


def listed_containers(client: docker.DockerClient, label: str) -> list[dict[str, Any]]:
    """The daemon's list entries (``Names``, ``Labels``, ``State``) of containers with ``label``.

    One call, no inspect per container: ``containers.list`` inspects each one and fails
    when one is removed in between, which happens all the time while attempts end.
    """
    with map_docker_errors("listing containers"):
        found: list[dict[str, Any]] = client.api.containers(all=True, filters={"label": label})
    return found


def list_containers(client: docker.DockerClient) -> list[LabelledContainer]:
    """Every container labelled ``durabench.run``, running or not."""
    out = []
    for c in listed_containers(client, "durabench.run"):
        names = c.get("Names") or [c.get("Id", "")]
        out.append(labelled(str(names[0]).lstrip("/"), str(c.get("State", "")), c.get("Labels")))
    return sorted(out)


def labelled(name: str, status: str, labels: dict[str, str] | None) -> LabelledContainer:
    """A sandbox of any backend as its labels describe it."""
    labels = labels or {}
    return LabelledContainer(
        name=name,
        status=status,
        run_id=labels.get("durabench.run", ""),
        task_id=labels.get("durabench.task", ""),
        lane=labels.get("durabench.lane", ""),
        attempt=int(labels.get("durabench.attempt", "0") or 0),
        placement=int(labels.get("durabench.placement", "0") or 0),
        host=labels.get("durabench.host", ""),
        deployment=labels.get(DEPLOYMENT_LABEL, ""),
    )


def remove_container(client: docker.DockerClient, name: str) -> None:
    """Remove a container, running or not; a missing one is fine."""
    with map_docker_errors(f"removing container {name}"):
        try:
            client.containers.get(name).remove(force=True, v=True)
        except docker.errors.NotFound:
            pass


def unused_task_images(client: docker.DockerClient) -> list[str]:
    """Tags of durabench task images that no container uses (they rebuild on demand)."""
    with map_docker_errors("listing images"):
        used = {c.get("ImageID") for c in client.api.containers(all=True)}
        images = client.images.list()
    return sorted(
        tag
        for image in images
        if image.id not in used
        for tag in image.tags
        if tag.startswith(TASK_IMAGE_REPO_PREFIX)
    )
