"""``python -m starter server``: the embedded Temporal dev server in the foreground."""

from __future__ import annotations

import asyncio

import click

from durabench.settings.values import Settings
from runtime.embedded import port_open, run_foreground
from starter.console import console

__all__ = ["server"]


@click.command()
def server() -> None:
    """Run the embedded Temporal server (SQLite under DURABENCH_HOME, Web UI on :8233)."""
    settings = Settings.from_env()
    if asyncio.run(port_open("127.0.0.1", settings.port)):
        raise click.ClickException(
            f"a Temporal server already answers on localhost:{settings.port} "
            f"(Web UI: http://localhost:{settings.ui_port}); stop it first to run one here"
        )
    console.print(f"Temporal dev server: history in {settings.home / 'temporal.db'}")
    run_foreground(settings)
