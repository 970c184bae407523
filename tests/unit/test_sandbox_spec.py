"""A sandbox spec is hardened by default and never mounts the Docker socket."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.sandbox import SandboxSpec


def _spec(mounts: dict[str, str]) -> SandboxSpec:
    return SandboxSpec(name="n", image="i", mounts=mounts)


def test_defaults_drop_privileges() -> None:
    spec = _spec({})
    assert spec.network == "none" and spec.no_new_privileges
    assert set(spec.cap_add) == {
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "SETUID",
        "SETGID",
        "KILL",
    }


@pytest.mark.parametrize(
    "mounts",
    [
        {"/var/run/docker.sock": "/var/run/docker.sock"},
        {"/run/docker.sock": "/sock"},
        {"/var/run/": "/host-run"},
        {"/": "/host"},
        {"/srv/markers": "/run/docker.sock"},
        {"/srv/markers": "/var/run/../run/docker.sock"},
    ],
)
def test_the_docker_socket_is_refused_with_what_to_do(mounts: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="Docker socket, and with it the host; remove"):
        _spec(mounts)


def test_docker_host_socket_and_links_to_it_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sock = tmp_path / "d" / "engine.sock"
    sock.parent.mkdir()
    sock.touch()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{sock}")
    with pytest.raises(ConfigError, match="Docker socket"):
        _spec({str(sock.parent): "/d"})
    (tmp_path / "link").symlink_to(sock)
    with pytest.raises(ConfigError, match="Docker socket"):
        _spec({str(tmp_path / "link"): "/x"})
    assert _spec({str(tmp_path / "other"): "/run/user"}).mounts  # others mount as before
