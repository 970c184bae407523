"""The gateway's process: its own limits, and its end once no worker of its code holds it."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path
from typing import Any

import pytest

from durabench.gateway import GatewayLimits, ModelGateway
from durabench.gateway.process import code_version, fresh_leases
from durabench.gateway.supervisor import GatewaySupervisor


def _limits_of(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {line[:26].strip(): line[26:47].strip() for line in lines}


async def test_the_gateway_runs_apart_within_its_own_file_and_memory_limits(
    tmp_path: Path,
) -> None:
    limits = GatewayLimits(files=1000, memory_mb=300)
    secret = "sk-ant-only-in-the-environment-0123456789"
    environ = {"ANTHROPIC_API_KEY": secret}
    gateway = ModelGateway(
        tmp_path / "gw",
        "unused",
        0,
        tmp_path / "a.toml",
        environ,
        bind_host="127.0.0.1",
        limits=limits,
    )
    try:
        await gateway.url()
        assert gateway.pid is not None and gateway.pid != os.getpid()
        found = _limits_of(gateway.pid)
        assert found["Max open files"] == "1000"
        assert found["Max data size"] == str(300 << 20)
        argv = Path(f"/proc/{gateway.pid}/cmdline").read_bytes().split(b"\0")
        assert argv[1:3] == [b"-m", b"durabench.gateway"] and len(argv) == 4  # nothing else
        assert secret.encode() in Path(f"/proc/{gateway.pid}/environ").read_bytes()
        kept = [p for p in (tmp_path / "gw").rglob("*") if p.is_file()]
        assert kept and not [p for p in kept if secret.encode() in p.read_bytes()]
    finally:
        await gateway.aclose()


async def test_a_gateway_no_worker_of_its_code_holds_stops_by_itself(tmp_path: Path) -> None:
    """A gateway of older code is not reused for ever: once its workers are gone, it ends."""
    gateway = ModelGateway(
        tmp_path / "gw", "unused", 0, tmp_path / "a.toml", {}, bind_host="127.0.0.1"
    )
    await gateway.url()
    process = gateway.supervisor.process
    assert process is not None
    if gateway._watch is not None:  # the worker stops touching its lease ...
        gateway._watch.cancel()
    gateway.supervisor.lease.write_text(f"not-{code_version()}")  # ... and wants other code
    assert await asyncio.to_thread(process.wait, 60) == 0
    gateway.supervisor.lease.unlink()


def test_a_lease_being_touched_is_never_seen_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway reads the leases every second while workers touch theirs every few.

    A lease it read between the worker's truncating and writing it named no code version,
    so no worker held the gateway; one with no linger (on a free port) stopped under its
    worker's running sessions, whose ledgers then said the host failed them.
    """
    supervisor = GatewaySupervisor(tmp_path, tmp_path / "a.toml", {}, GatewayLimits())
    supervisor.hold()
    opened, seen, looking = io.open, list[dict[str, str]](), [False]

    def gateway_looks(*args: Any, **kwargs: Any) -> Any:
        file = opened(*args, **kwargs)  # the worker has the file open for writing ...
        if not looking[0]:
            looking[0] = True
            seen.append(fresh_leases(tmp_path))  # ... as the gateway reads the leases
            looking[0] = False
        return file

    monkeypatch.setattr(io, "open", gateway_looks)
    supervisor.hold()
    monkeypatch.undo()
    assert seen and all(list(leases.values()) == [code_version()] for leases in seen), seen
