"""``starter status`` reads; it never starts a Temporal server.

After ``server --stop``, a status that started the embedded server again would leave one
running that the operator had just stopped, silently. Status says none is running and how
to start one; the port stays closed and no server's pid is written.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.settings.values import Settings
from runtime.embedded import port_open
from starter.status import list_main, status_main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """This home's embedded server, stopped: nothing answers on its port."""
    monkeypatch.delenv("TEMPORAL_ADDRESS", raising=False)
    port, ui = _free_port(), _free_port()
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DURABENCH_PORT", str(port))
    monkeypatch.setenv("DURABENCH_UI_PORT", str(ui))
    settings = Settings(home=tmp_path / "home", port=port, ui_port=ui)
    yield settings
    pid = settings.home / "temporal.pid"
    if pid.exists():  # the defect: a server was started; end it, not to leave it running
        os.kill(int(pid.read_text()), signal.SIGKILL)


async def test_status_of_a_run_says_no_server_runs_and_starts_none(stopped: Settings) -> None:
    with pytest.raises(ConfigError, match=r"no Temporal server is running") as caught:
        await status_main("r1", settings=stopped)
    assert "python -m starter server" in str(caught.value)
    assert not await port_open("127.0.0.1", stopped.port)
    assert not (stopped.home / "temporal.pid").exists()


async def test_the_list_of_runs_starts_none_either(stopped: Settings) -> None:
    with pytest.raises(ConfigError, match=r"no Temporal server is running"):
        await list_main()
    assert not await port_open("127.0.0.1", stopped.port)
