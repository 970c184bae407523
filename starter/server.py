"""``python -m starter server``: the embedded Temporal dev server in the foreground."""

from __future__ import annotations

import asyncio

import click

from durabench.errors import ConfigError
from durabench.settings.values import Settings
from runtime.embedded import port_open, run_foreground, stop_server
from runtime.server_ports import check_free_ui_port, check_owner
from starter.console import console, shown
from starter.refusal import Refusal

__all__ = ["server"]


@click.command()
@click.option("--stop", is_flag=True, help="Stop this home's server (started by any command).")
def server(stop: bool) -> None:
    """Run the embedded Temporal server (SQLite under DURABENCH_HOME, Web UI on :8233).

    The first command that needs Temporal starts it in the background, and it stays up for
    the next; --stop ends it (its history stays in DURABENCH_HOME/temporal.db).
    """
    settings = Settings.from_env()
    if stop:
        try:
            pid = asyncio.run(stop_server(settings))
        except ConfigError as exc:
            raise Refusal(str(exc)) from exc
        console.print(f"stopped the Temporal dev server of {shown(str(settings.home))} (pid {pid})")
        return
    try:
        if asyncio.run(port_open("127.0.0.1", settings.port)):
            check_owner(settings)  # another home's: named, with how to move this one
            raise ConfigError(
                f"a Temporal server already answers on localhost:{settings.port} "
                f"(Web UI: http://localhost:{settings.ui_port}); stop it first to run one here"
            )
        check_free_ui_port(settings, asyncio.run(port_open("127.0.0.1", settings.ui_port)))
    except ConfigError as exc:
        raise Refusal(str(exc)) from exc
    console.print(f"Temporal dev server: history in {shown(str(settings.home / 'temporal.db'))}")
    run_foreground(settings)
