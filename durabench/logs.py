"""Structured logs: JSON lines when not on a terminal, readable lines when on one.

Every line from an attempt is bound to its run, task, lane and attempt, so one ``grep``
follows an attempt across workers. Libraries that log through the standard library (the
Temporal SDK, its core once forwarded, docker, httpx) and Python's warnings are rendered by
the same processors, so a log collector reading JSON never meets a line of another shape:
a traceback travels inside its line, under ``exception``.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

__all__ = ["configure_logging", "get_logger"]


def _renderer() -> structlog.types.Processor:
    """Readable lines on a terminal; JSON anywhere else (pipes, files, log collectors)."""
    if sys.stderr.isatty():
        return structlog.dev.ConsoleRenderer()
    return structlog.processors.JSONRenderer()


def configure_logging(default_level: str = "info") -> None:
    """Set up structlog once per process; ``DURABENCH_LOG_LEVEL`` overrides the level.

    Other libraries log through the standard library at ``WARNING`` and above (their
    ``INFO`` is chatter), in the same shape as durabench's own lines.
    """
    level_name = (os.environ.get("DURABENCH_LOG_LEVEL") or default_level).upper()
    level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    renderer = _renderer()
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    flatten: list[structlog.types.Processor] = (
        [] if sys.stderr.isatty() else [structlog.processors.format_exc_info]
    )
    structlog.configure(
        processors=[*shared, *flatten, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
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


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A logger named ``name``."""
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger
