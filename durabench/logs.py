"""Structured logs: JSON lines when not on a terminal, readable lines when on one.

Every line from an attempt is bound to its run, task, lane and attempt, so one ``grep``
follows an attempt across workers.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

__all__ = ["configure_logging", "get_logger"]


def configure_logging(default_level: str = "info") -> None:
    """Set up structlog once per process; ``DURABENCH_LOG_LEVEL`` overrides the level."""
    level_name = (os.environ.get("DURABENCH_LOG_LEVEL") or default_level).upper()
    level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer()
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=sys.stderr)


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A logger named ``name``."""
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger
