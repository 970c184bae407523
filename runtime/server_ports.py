"""Whose embedded server answers on a port, and whether the ports a new one needs are free.

``DURABENCH_HOME`` holds one server's history (``temporal.db``); its ports are
``DURABENCH_PORT`` and ``DURABENCH_UI_PORT``. A second home given the same ports would
otherwise connect to the first home's server and write its runs there, and a UI port
taken by anything would surface a minute later as the dev server's own error. The
server's command line names its database, so the home that owns a running server is
read from the process table (``/proc``); the server durabench starts also leaves its pid
and ports in ``temporal.json`` beside its database.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from durabench.errors import ConfigError
from durabench.settings.values import Settings

__all__ = [
    "OWNER_FILE",
    "DevServer",
    "check_free_ui_port",
    "check_owner",
    "own_server",
    "write_owner",
]

OWNER_FILE = "temporal.json"
"""In ``DURABENCH_HOME``: the embedded server's pid and ports, written when it starts."""


class DevServer(NamedTuple):
    """A ``temporal server start-dev`` process found listening on a port."""

    pid: int
    db_file: Path | None
    """Its SQLite file; ``None`` for an in-memory server, which is no home's."""


def write_owner(home: Path, pid: int, port: int, ui_port: int | None) -> None:
    """Record the server just started for ``home``."""
    info = {"pid": pid, "port": port, "ui_port": ui_port, "db": str(home / "temporal.db")}
    (home / OWNER_FILE).write_text(json.dumps(info) + "\n")


def _dev_server_on(port: int, proc: Path = Path("/proc")) -> DevServer | None:
    """The dev server whose command line serves ``port``, if this system lists one."""
    for entry in proc.glob("[0-9]*/cmdline") if proc.is_dir() else ():
        try:
            args = entry.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue  # gone, or not ours to read
        if "start-dev" not in args or _after(args, "--port") != str(port):
            continue
        db = _after(args, "--db-filename")
        return DevServer(int(entry.parent.name), Path(db) if db else None)
    return None


def _after(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args[:-1] else None


def check_owner(settings: Settings) -> None:
    """Accept the server on ``settings.port`` unless it is another home's embedded server.

    Raises:
        ConfigError: the server keeps another ``DURABENCH_HOME``'s history; the message
            names that home and its pid, and how to give this home ports of its own.
    """
    found = _dev_server_on(settings.port)
    if found is None or found.db_file is None:
        return  # a server of no home (in-memory, or started elsewhere): used as it is
    mine = (settings.home / "temporal.db").resolve()
    if found.db_file.resolve() == mine:
        return
    raise ConfigError(
        f"port {settings.port} is served by the embedded Temporal of "
        f"DURABENCH_HOME={found.db_file.parent} (pid {found.pid}), not of this home "
        f"({settings.home}): use that home, or give this one ports of its own with "
        "DURABENCH_PORT and DURABENCH_UI_PORT (or stop that server)"
    )


def check_free_ui_port(settings: Settings, in_use: bool) -> None:
    """Refuse to start a server whose Web UI port is taken (``in_use``).

    Raises:
        ConfigError: the port is in use; the message says which setting moves it.
    """
    if not in_use or settings.ui_port is None:
        return
    holder = _dev_server_on(settings.ui_port)
    who = f" (by pid {holder.pid})" if holder else ""
    raise ConfigError(
        f"the Web UI port {settings.ui_port} is in use{who}, so Temporal's dev server for "
        f"{settings.home} cannot start on port {settings.port}: set DURABENCH_UI_PORT to a "
        "free port"
    )


def own_server(settings: Settings) -> DevServer:
    """The embedded server of ``settings.home``, found listening on its port.

    Raises:
        ConfigError: nothing of this system serves the port, or another home's server
            does (named, as :func:`check_owner` names it).
    """
    found = _dev_server_on(settings.port)
    if found is None:
        raise ConfigError(
            f"no Temporal server answers on localhost:{settings.port} from this machine's "
            f"processes: nothing to stop for {settings.home} (DURABENCH_PORT names the port)"
        )
    check_owner(settings)
    if found.db_file is None:
        raise ConfigError(
            f"the Temporal server on localhost:{settings.port} (pid {found.pid}) keeps no "
            f"home's history: durabench did not start it for {settings.home}; stop it where "
            "it was started"
        )
    return found
