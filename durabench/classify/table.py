"""The classifier's pattern table: data, versioned, read from ``patterns.json``.

Patterns are case-insensitive regular expressions. A change to any of them changes what
an attempt is called, so the table's ``version`` goes up with it and every result records
the version that decided it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from durabench.documents import loads_json
from durabench.models.verdict import ExitClass

__all__ = ["PATTERNS_FILE", "PatternGroup", "PatternTable", "load_table"]

PATTERNS_FILE = Path(__file__).resolve().parent / "patterns.json"


class PatternGroup(BaseModel):
    """Patterns that mean one exit class."""

    model_config = ConfigDict(frozen=True)

    exit_class: ExitClass
    """The class these patterns mean."""
    patterns: tuple[str, ...]
    """Case-insensitive regular expressions."""

    def search(self, text: str) -> str | None:
        """The first pattern found in ``text``, or ``None``."""
        for pattern in self.patterns:
            if re.search(pattern, text, re.IGNORECASE):
                return pattern
        return None


class PatternTable(BaseModel):
    """The whole table."""

    model_config = ConfigDict(frozen=True)

    version: int
    """Recorded with every verdict."""
    tail_events: int
    """How many final events count as "the end of the session" for error signatures."""
    infra: tuple[PatternGroup, ...]
    """Infra signatures, most specific first (a usage cap before a bare 429)."""
    model: tuple[PatternGroup, ...]
    """Model-side error signatures (output cap, context exhausted)."""
    signals: dict[str, tuple[str, ...]]
    """Last-message signal name to patterns."""


@cache
def load_table(path: Path = PATTERNS_FILE) -> PatternTable:
    """The pattern table at ``path`` (the bundled one by default), checked."""
    table = PatternTable.model_validate(loads_json(path.read_text()))
    for group in (*table.infra, *table.model):
        for pattern in group.patterns:
            re.compile(pattern)
    return table
