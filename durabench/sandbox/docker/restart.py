"""Restarting a container from outside, its memory volumes carried over.

How an agent that resists being stopped is stopped: a fork bomb that holds every process
slot leaves no room for a ``docker exec``, but the daemon needs none. The container is
frozen (cgroup freezer: nothing in it runs or forks while it is read), its memory volumes
(``/logs``: step markers, transcript, the verifier's output) are streamed to the host, it
is killed and started again, and the volumes are written back as they were when it froze.
The files on its own disk outlive the restart by themselves.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from contextlib import ExitStack, suppress
from pathlib import PurePosixPath
from typing import IO

import docker
import docker.errors
from docker.api import APIClient

__all__ = ["restart_keeping"]

_CHUNK = 1 << 20
_STOP_WAIT_S = 60
"""How long the daemon may take to see a killed container's end."""


def _pause(api: APIClient, name: str) -> bool:
    """Freeze every process of the container; whether it was (one not running is not)."""
    try:
        api.pause(name)
    except docker.errors.NotFound:
        raise
    except docker.errors.APIError:  # not running, or paused already
        return bool(api.inspect_container(name)["State"].get("Paused"))
    return True


def _save(api: APIClient, name: str, path: str, paused: bool, spool: IO[bytes]) -> bool:
    """Stream ``path``'s archive into ``spool``; whether there was one to keep.

    A daemon that reads no archive of a paused container has it thawed first: what the
    worker keeps (markers, transcript) is written by root only, which nothing of the
    agent's runs as, and the rest is the agent's own.
    """
    try:
        stream, _ = api.get_archive(name, path, chunk_size=_CHUNK)
    except docker.errors.NotFound:
        return False
    except docker.errors.APIError:
        if not paused:
            raise
        api.unpause(name)
        stream, _ = api.get_archive(name, path, chunk_size=_CHUNK)
    for chunk in stream:
        spool.write(chunk)
    spool.seek(0)
    return True


def _kill(api: APIClient, name: str) -> None:
    """SIGKILL the container's init (every process goes with it); wait for its end."""
    try:
        api.kill(name, "SIGKILL")
    except docker.errors.NotFound:
        raise
    except docker.errors.APIError:  # a daemon that kills no paused container, or it ended
        with suppress(docker.errors.APIError):
            api.unpause(name)
        with suppress(docker.errors.APIError):
            api.kill(name, "SIGKILL")
    api.wait(name, timeout=_STOP_WAIT_S)


def restart_keeping(api: APIClient, name: str, keep: Iterable[str]) -> None:
    """Restart container ``name`` from outside, the directories ``keep`` carried over.

    Raises:
        docker.errors.NotFound: the container is gone.
        docker.errors.APIError: the daemon refused a step.
    """
    with ExitStack() as stack:
        paused = _pause(api, name)
        saved: list[tuple[str, IO[bytes]]] = []
        for path in keep:
            spool: IO[bytes] = stack.enter_context(tempfile.TemporaryFile())
            if _save(api, name, path, paused, spool):
                saved.append((path, spool))
        _kill(api, name)
        api.start(name)
        for path, spool in saved:
            api.put_archive(name, str(PurePosixPath(path).parent), spool)
