"""Registers the commands; each lives in its own module."""

from __future__ import annotations

import click

from durabench import __version__
from durabench.logs import configure_logging
from starter.accounts import accounts
from starter.approve import approve, reject
from starter.classify import classify
from starter.control import cancel, pause, set_parallel
from starter.export import export
from starter.init import init
from starter.report import publish, report
from starter.resume import resume
from starter.run import run
from starter.schema import schema
from starter.score import score
from starter.server import server
from starter.status import status
from starter.sweep import sweep
from starter.tasks import tasks
from starter.work import worker


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="durabench")
def cli() -> None:
    """Durabench: paired coding-agent benchmark runs on Temporal."""
    configure_logging("warning")


COMMANDS = (
    run,
    approve,
    reject,
    pause,
    resume,
    set_parallel,
    cancel,
    status,
    report,
    export,
    schema,
    score,
    publish,
    classify,
    sweep,
    accounts,
    server,
    init,
    tasks,
    worker,
)

for command in COMMANDS:
    cli.add_command(command)
