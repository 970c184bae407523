"""The embedded default: a detached dev server on a SQLite file, search attributes set."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest

from durabench.settings.values import Settings
from runtime.client import connect
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
