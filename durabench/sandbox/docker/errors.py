"""Docker's exceptions, translated at the boundary into durabench's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import docker
import docker.errors
import requests

from durabench.errors import DockerUnavailable, SandboxError, SandboxGone

__all__ = ["docker_client", "map_docker_errors", "shared_docker_client"]

_START_HINT = (
    "start it (`sudo dockerd &`, or `sudo systemctl start docker`) or point DOCKER_HOST at one"
)


@contextmanager
def map_docker_errors(action: str) -> Iterator[None]:
    """Translate docker and transport errors raised while doing ``action``.

    Raises:
        DockerUnavailable: the daemon did not answer.
        SandboxGone: the container is not running (an exec into it can never start).
        SandboxError: the daemon answered with an error.
    """
    try:
        yield
    except docker.errors.NotFound:
        raise
    except requests.exceptions.ConnectionError as exc:
        raise DockerUnavailable(
            f"Docker Engine not reachable while {action}; {_START_HINT}"
        ) from exc
    except docker.errors.DockerException as exc:
        if _not_running(exc):
            raise SandboxGone(
                f"the container stopped (its main process ended, or it was stopped) while "
                f"{action}; the attempt must start over"
            ) from exc
        if "Connection" in str(exc) or "connect" in str(exc):
            raise DockerUnavailable(
                f"Docker Engine not reachable while {action}: {exc}; {_START_HINT}"
            ) from exc
        raise SandboxError(f"Docker failed while {action}: {exc}") from exc


def _not_running(exc: docker.errors.DockerException) -> bool:
    """Docker's 409 to an exec into a container that is not running: it never will."""
    return (
        isinstance(exc, docker.errors.APIError)
        and exc.status_code == 409
        and "is not running" in str(exc)
    )


def docker_client() -> docker.DockerClient:
    """A client for the local daemon (``DOCKER_HOST`` honoured), checked with a ping.

    Raises:
        DockerUnavailable: no daemon answers.
    """
    with map_docker_errors("connecting"):
        client = docker.from_env()
        try:
            client.ping()
        except BaseException:
            client.close()
            raise
    return client


@cache
def shared_docker_client() -> docker.DockerClient:
    """This process's one client (a connection pool), made on first use.

    Every sandbox and image build of a worker shares it rather than connect per phase.

    Raises:
        DockerUnavailable: no daemon answers (nothing is cached then).
    """
    return docker_client()
