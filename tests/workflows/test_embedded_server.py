"""The embedded default: a detached dev server on a SQLite file, search attributes set."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest

from durabench.errors import ConfigError
from durabench.settings.values import Settings
from runtime.client import connect
from runtime.embedded import ensure_server
from tests.starter_cli import one_error
from workflows.search_attributes import SEARCH_ATTRIBUTES


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[Settings]:
    settings = Settings(home=tmp_path / "home", port=_free_port(), ui_port=_free_port())
    yield settings
    pid_file = settings.home / "temporal.pid"
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError):  # a test may have stopped it
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


async def test_first_command_starts_a_persistent_server_the_next_reuses(embedded: Settings) -> None:
    client = await connect(embedded)
    db = embedded.home / "temporal.db"
    assert db.is_file()
    assert Path(f"{db}-wal").is_file(), "the SQLite store must run with the WAL journal"
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace="default")
    )
    assert {k.name for k in SEARCH_ATTRIBUTES} <= set(listed.custom_attributes)

    pid = (embedded.home / "temporal.pid").read_text()
    again = await connect(embedded)
    assert (embedded.home / "temporal.pid").read_text() == pid
    assert (await again.count_workflows()).count == 0


async def test_a_taken_ui_port_is_refused_before_the_server_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ui_port = int(taken.getsockname()[1])
        settings = Settings(home=tmp_path / "home", port=_free_port(), ui_port=ui_port)
        with pytest.raises(ConfigError) as err:
            await ensure_server(settings)
    said = str(err.value)
    assert f"Web UI port {ui_port} is in use" in said and "DURABENCH_UI_PORT" in said
    assert not (settings.home / "temporal.pid").exists()


async def test_a_second_home_on_the_same_port_is_told_whose_server_it_is(
    embedded: Settings, tmp_path: Path
) -> None:
    await ensure_server(embedded)
    owner = embedded.home / "temporal.json"
    assert owner.is_file()  # pid and ports, for whoever finds the ports taken
    other = embedded.model_copy(update={"home": tmp_path / "other-home"})
    with pytest.raises(ConfigError) as err:
        await ensure_server(other)
    said = str(err.value)
    assert f"DURABENCH_HOME={embedded.home}" in said
    assert "DURABENCH_PORT" in said
    assert await ensure_server(embedded) == embedded.address  # its own home: used as before


def test_starter_server_refuses_a_taken_ui_port_too(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ui_port = str(taken.getsockname()[1])
        env = {**os.environ, "DURABENCH_HOME": str(tmp_path / "home")}
        env |= {"DURABENCH_PORT": str(_free_port()), "DURABENCH_UI_PORT": ui_port}
        command = [sys.executable, "-m", "starter", "server"]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert f"Web UI port {ui_port} is in use" in one_error(proc)


def _server_cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DURABENCH_HOME": str(settings.home)}
    env |= {"DURABENCH_PORT": str(settings.port), "DURABENCH_UI_PORT": str(settings.ui_port)}
    command = [sys.executable, "-m", "starter", "server", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=90)


async def test_starter_server_stop_stops_this_homes_server_only(
    embedded: Settings, tmp_path: Path
) -> None:
    """The server outlives the run that started it: one command stops it, and only it."""
    await ensure_server(embedded)
    pid = int((embedded.home / "temporal.pid").read_text())
    other = embedded.model_copy(update={"home": tmp_path / "other-home"})
    refused = one_error(_server_cli(other, "--stop"))
    assert f"DURABENCH_HOME={embedded.home}" in refused  # another home's: named, not stopped
    assert _port_open(embedded.port)

    stopped = _server_cli(embedded, "--stop")
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped the Temporal dev server of {embedded.home} (pid {pid})" in stopped.stdout
    assert not _port_open(embedded.port)  # the command returns once the port is closed
    again = one_error(_server_cli(embedded, "--stop"))
    assert f"no Temporal server answers on localhost:{embedded.port}" in again


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
