"""``python -m starter worker`` (also ``python worker.py``): a worker for this machine."""

from __future__ import annotations

import asyncio

import click

from durabench import __version__
from durabench.errors import DurabenchError
from starter.refusal import Refusal, check_install

__all__ = ["worker"]


@click.command(name="worker", context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="durabench")
def worker() -> None:
    """Run a worker here until Ctrl-C or SIGTERM: it carries runs started with --detach.

    It polls the shared task queue (DURABENCH_TASK_QUEUE) and this host's own queue, and
    admits attempts by memory, measured (each sandbox at what it holds and may grow by,
    within DURABENCH_MAX_SANDBOXES) and DURABENCH_MAX_VERIFIERS verifiers. It needs a
    Docker daemon unless DURABENCH_SANDBOX=daytona, and uses the Temporal of
    TEMPORAL_ADDRESS or the temporal CLI's profile, or starts the embedded server.
    Stopped, it lets activities finish briefly; agent sessions keep running in their
    containers for the next worker to re-attach.
    """
    check_install()  # before runtime is imported: it may be another package's
    from runtime.workers import main  # the worker's module: loaded only for a worker

    try:
        asyncio.run(main())
    except (DurabenchError, RuntimeError) as exc:
        raise Refusal(str(exc)) from None
