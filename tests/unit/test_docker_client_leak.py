"""A Docker daemon that does not answer leaves no socket open behind the refusal.

docker-py asks the daemon's API version inside the client's constructor; when that fails
the half-made client is dropped with its connection open, and the socket's
``ResourceWarning`` surfaces wherever the garbage collector finds it: in a later test, or
every sweep of a Daytona-only worker (which tries the local daemon and carries on).
"""

from __future__ import annotations

import gc
import socket
import warnings
from pathlib import Path

import pytest

from durabench.errors import DockerUnavailable
from durabench.sandbox.docker.errors import docker_client


@pytest.mark.parametrize("socket_file", ["refused", "absent"])
def test_a_daemon_that_does_not_answer_leaves_no_socket_open(
    socket_file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "docker.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bound:
        if socket_file == "refused":  # a socket file nobody listens on
            bound.bind(str(path))
        monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
        gc.collect()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            for _ in range(3):
                with pytest.raises(DockerUnavailable, match="Docker Engine not reachable"):
                    docker_client()
            gc.collect()
    leaked = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaked == [], [str(w.message) for w in leaked]
