"""The hand-written mistakes list (hand_mutants.toml) still describes the code.

Bookkeeping, not a kill: a mistake whose text no longer occurs once in its file could not
be made, and ``scripts/hand_mutants.py`` would stop on it; this says so in the unit tier.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hand_mutants", REPO / "scripts/hand_mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while defined
    spec.loader.exec_module(module)
    return module


def test_every_listed_mistake_can_still_be_made_and_names_a_test_file() -> None:
    mistakes = _tool().load_mistakes()
    assert mistakes
    for m in mistakes:
        assert (REPO / m.file).read_text().count(m.old) == 1, m
        assert m.old != m.new and m.what and m.tests, m
        for test in m.tests:
            assert (REPO / test.split("::")[0]).is_file(), test
