"""Docker's exceptions, translated at the boundary into durabench's."""

from __future__ import annotations

import socket
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
        client = _from_env()
        try:
            client.ping()
        except BaseException:
            client.close()
            raise
    return client


def _from_env() -> docker.DockerClient:
    """``docker.from_env()``, closing the socket a failed version probe leaves open.

    docker-py asks the daemon's API version inside the client's constructor; its unix
    transport opens a socket and, when the connect fails, raises without closing it. The
    socket is then held only by the traceback, and the garbage collector closes it, with
    a ``ResourceWarning``, whenever and wherever it runs (a Daytona-only worker tries the
    local daemon at every sweep).
    """
    try:
        return docker.from_env()
    except docker.errors.DockerException as exc:
        _close_sockets_of(exc)
        raise


def _close_sockets_of(exc: BaseException) -> None:
    """Close every socket a frame of ``exc``'s traceback, or of its causes', holds."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        tb = cause.__traceback__
        while tb is not None:
            for value in tb.tb_frame.f_locals.values():
                if isinstance(value, socket.socket):
                    value.close()
            tb = tb.tb_next
        cause = cause.__cause__ or cause.__context__


@cache
def shared_docker_client() -> docker.DockerClient:
    """This process's one client (a connection pool), made on first use.

    Every sandbox and image build of a worker shares it rather than connect per phase.

    Raises:
        DockerUnavailable: no daemon answers (nothing is cached then).
    """
    return docker_client()
