"""scripts/mutation.py's bookkeeping, without running mutmut (that takes minutes).

The reviewed equivalent mutants must still describe the code: an entry whose line no
longer exists in its module would silently stop matching, and the module's figure would
drop for no visible reason (or a new survivor would hide behind a stale reason).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_tool", REPO / "scripts/mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


def test_every_equivalent_mutant_names_a_line_of_its_module(tool: ModuleType) -> None:
    known = tool.load_equivalents()
    assert known
    paths = {m.path for m in tool.MODULES.values()}
    for entry in known:
        assert entry.module in paths, entry
        source = (REPO / entry.module).read_text()
        assert f"def {entry.function}(" in source, entry
        assert entry.before in {line.strip() for line in source.splitlines()}, entry
        assert entry.before != entry.after and entry.why.strip(), entry


def test_a_mutant_s_function_and_changed_line_are_read_from_mutmut(tool: ModuleType) -> None:
    name = "durabench.results.stats.x_mcnemar_exact__mutmut_4"
    assert tool.function_of(name) == "mcnemar_exact"
    assert tool.function_of("durabench.results.scoring.x__cell__mutmut_25") == "_cell"
    method = "durabench.gateway.meter.x\u01c1ResponseMeter\u01c1__init____mutmut_8"
    assert tool.function_of(method) == "__init__"
    diff = (
        "# durabench.results.stats.x_mcnemar_exact__mutmut_4: survived\n"
        "--- durabench/results/stats.py\n+++ durabench/results/stats.py\n"
        "@@ -4,7 +4,7 @@\n     n = b + c\n-    if n == 0:\n+    if n == 1:\n         return 1.0\n"
    )
    assert tool.changed_lines(diff) == ("if n == 0:", "if n == 1:")


def test_the_rate_leaves_out_equivalent_mutants_and_counts_timeouts_as_killed(
    tool: ModuleType,
) -> None:
    tally = tool.Tally(
        Counter({"killed": 16, "timeout": 2, "survived": 3, "no tests": 1}),
        equivalent=[("- a\n+ b", "why"), ("- c\n+ d", "why")],
        survivors=[("m", "diff"), ("n", "diff")],
    )
    assert tally.rate == 18 / 20
    assert tool.Tally(Counter(), [], []).rate == 1.0


def test_each_module_s_tests_exist(tool: ModuleType) -> None:
    for module in tool.MODULES.values():
        assert (REPO / module.path).is_file(), module
        assert [p for g in module.tests for p in REPO.glob(g)], module
