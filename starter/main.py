"""Registers the commands; each lives in its own module. :func:`main` runs them."""

from __future__ import annotations

import logging
import os
import sys
import traceback

import click

from durabench import __version__
from starter.verbs import VERBS, LazyGroup


@click.group(cls=LazyGroup, verbs=VERBS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="durabench")
def cli() -> None:
    """Durabench: paired coding-agent benchmark runs on Temporal."""
    from durabench.logs import configure_logging  # structlog: only for a verb that runs

    configure_logging("warning")


def main() -> None:
    """``python -m starter`` and the ``durabench`` script: the command, then a hard exit.

    The Temporal client's Rust runtime keeps threads of its own. An interpreter that tears
    itself down while one of them still works for Python (a call the command did not wait
    for, a connection closing) hangs, aborts or dies of SIGSEGV after the command has
    printed its result. Once the command is done nothing is left to clean up, so the
    output is flushed and the process leaves with the command's code, skipping teardown.

    The SDK's issue is temporalio/sdk-python#300 ("Investigate PyGILState_Release issue
    for client": a short-lived client process dies in finalization); once it is fixed,
    a plain return replaces ``os._exit``.
    """
    try:
        cli()
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:  # noqa: BLE001 - a bug: shown, then the same clean exit
        traceback.print_exc()
        code = 1
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


def _exit_code(code: str | int | None) -> int:
    """``SystemExit.code`` as a process exit code (a message is printed, and is 1)."""
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1
