"""Structured logs: JSON lines when not on a terminal, readable lines when on one.

Every line from an attempt is bound to its run, task, lane and attempt, so one ``grep``
follows an attempt across workers. Libraries that log through the standard library (the
Temporal SDK, its core once forwarded, docker, httpx) and Python's warnings are rendered by
the same processors, so a log collector reading JSON never meets a line of another shape:
a traceback travels inside its line, under ``exception``.

A process that shows a live view on the terminal (``python -m starter run``, whose worker
runs in-process) logs to a file instead (:func:`configure_logging`'s ``log_file``): the
detail goes there, and the terminal gets one line per warning or error, naming the file.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import structlog

from durabench.settings.environment import log_level

__all__ = ["configure_logging", "get_logger", "logs_to_file"]


_SHARED: list[structlog.types.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def _renderer() -> structlog.types.Processor:
    """Readable lines on a terminal; JSON anywhere else (pipes, files, log collectors)."""
    if sys.stderr.isatty():
        return structlog.dev.ConsoleRenderer()
    return structlog.processors.JSONRenderer()


def configure_logging(default_level: str = "info", log_file: Path | None = None) -> None:
    """Set up structlog once per process; ``DURABENCH_LOG_LEVEL`` overrides the level.

    Other libraries log through the standard library at ``WARNING`` and above (their
    ``INFO`` is chatter), in the same shape as durabench's own lines. With ``log_file``,
    every line goes to that file as JSON, and stderr gets one line per warning or error.
    """
    level_name = log_level(default_level)
    level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    if log_file is not None:
        _to_file(level, log_file)
        return
    renderer = _renderer()
    shared = _SHARED
    flatten: list[structlog.types.Processor] = (
        [] if sys.stderr.isatty() else [structlog.processors.format_exc_info]
    )
    structlog.configure(
        processors=[*shared, *flatten, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,  # a later configure (an in-process worker's) holds
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                *flatten,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(level, logging.WARNING))
    logging.captureWarnings(True)


def _to_file(level: int, log_file: Path) -> None:
    """Everything through the standard library: JSON lines to the file, a line to stderr."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,  # a logger first used here follows what comes after
    )
    to_file = logging.FileHandler(log_file, encoding="utf-8")
    to_file.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*_SHARED, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    terse = _OneLine(log_file)
    for handler in (to_file, terse):
        handler.addFilter(_ours_or_warning)
    terse.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.handlers[:] = [to_file, terse]
    root.setLevel(level)
    logging.captureWarnings(True)


@contextmanager
def logs_to_file(log_file: Path, default_level: str = "info") -> Iterator[None]:
    """:func:`configure_logging` with ``log_file`` for a while, then the logging before.

    A command hosts a worker for as long as it shows a run; a test calling that command
    in-process gets its own logging back.
    """
    root = logging.getLogger()
    handlers, level, config = root.handlers[:], root.level, structlog.get_config()
    configure_logging(default_level, log_file=log_file)
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        structlog.configure(**config)


def _ours_or_warning(record: logging.LogRecord) -> bool:
    """Structlog lines at the level set; other libraries' from ``WARNING`` up."""
    return isinstance(record.msg, dict) or record.levelno >= logging.WARNING


_CONTEXT = re.compile(r" \(\{.*\}\)$")
"""The context dict the Temporal SDK appends to a message: the line names it shorter."""


class _OneLine(logging.Handler):
    """One line per record on whatever ``sys.stderr`` is now (a live view redirects it)."""

    WIDTH = 160
    """Characters of the record's first line shown before the file is named."""

    def __init__(self, log_file: Path) -> None:
        super().__init__()
        self.log_file = log_file

    def emit(self, record: logging.LogRecord) -> None:
        """Print ``level: logger: first line (details: file)``."""
        fields = record.msg if isinstance(record.msg, dict) else {}
        text = str(fields["event"]) if "event" in fields else record.getMessage()
        first = _CONTEXT.sub("", (text.strip().splitlines() or [""])[0])[: self.WIDTH]
        where = getattr(record, "temporal_activity", None)  # the SDK's, on activity lines
        if isinstance(where, dict) and "activity_type" in where:
            first = f"{where['activity_type']} of {where.get('workflow_id', '?')}: {first}"
        why = _exception_line(record, fields.get("exc_info"))
        level = record.levelname.lower()
        line = f"{level}: {record.name}: {first}{why} (details: {self.log_file})"
        print(line, file=sys.stderr, flush=True)


def _exception_line(record: logging.LogRecord, asked: object) -> str:
    """``: Type: first line`` of the record's exception (handlers run inside ``except``)."""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is None and asked is True:
        exc = sys.exc_info()[1]
    elif exc is None and isinstance(asked, BaseException):
        exc = asked
    if exc is None:
        return ""
    first = (str(exc).strip().splitlines() or [""])[0]
    return f": {type(exc).__name__}: {first}"[: _OneLine.WIDTH]


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A logger named ``name``."""
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger
