"""Every count beside a noun in user-facing text agrees with it: "1 file", never "1 files".

Enumerated over the source: every f-string whose value is followed by a plural noun of
:data:`NOUNS` is a finding, unless the count goes through
:func:`durabench.wording.counted` or is listed in :data:`NEVER_ONE` with why it is
never one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from durabench.wording import counted, rounded

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("durabench", "starter", "activities", "workflows", "runtime", "worker.py")

NOUNS = frozenset(
    "accounts arms attempts bytes calls characters containers entries errors files hosts "
    "hours lanes lines minutes networks pairs processes requests resamples retries runs "
    "sandboxes seconds sessions slots steps tasks times tokens workers".split()
)
"""Plural nouns a count stands beside in what people read."""

NEVER_ONE = {
    ("durabench/agents/cli.py", "MAX_PROMPT_BYTES"): "a constant cap of thousands",
    ("durabench/attempt/verification.py", "REWARD_BYTES"): "a constant cap",
    ("durabench/results/store/keys.py", "NAME_MAX"): "a constant cap",
    ("durabench/accounts/file.py", "_MIN_SECRET"): "a constant minimum",
    ("durabench/planning/cost_estimate.py", "DEFAULT_HIGH.total"): "a default of thousands",
    ("durabench/results/report.py", "c.resamples"): "bootstrap resamples: thousands",
    ("durabench/results/story.py", "total"): "'k of N pairs (were) excluded': k < N, so N >= 2",
    ("starter/tasks.py", "len(task_dirs)"): "'k of N tasks': the noun goes with N, k >= 1 < N",
    ("activities/sandbox.py", "self.capacity.limit"): "'running its N attempts': a full host",
    ("durabench/planning/plan.py", "request.rerun"): "'no <which> tasks': a kind of task",
    ("durabench/planning/rows.py", "req.rerun"): "'(<which> tasks)': a kind of task",
    ("durabench/results/report.py", "req.rerun"): "'(<which> tasks)': a kind of task",
    ("durabench/sandbox/docker/tree_keeper.py", "PATH_LIMIT"): "a constant cap",
    ("durabench/service/client.py", "self._cap"): "a cap of bytes, never one",
}
"""(file, expression) of counts that are never one, and why."""

NAMES = frozenset({"agent", "model"})
"""Expressions that are names, not counts ("{agent} calls a model", "{agent} accounts")."""


def _a_fraction(values: list[ast.expr], value: ast.expr) -> bool:
    """Whether ``value`` is the ``N`` of "k/N pairs", which reads "k of N pairs"."""
    i = values.index(value)
    before = values[i - 1] if i > 0 else None
    return isinstance(before, ast.Constant) and str(before.value).endswith("/")


def _findings() -> list[tuple[str, int, str, str]]:
    found = []
    for root in SOURCES:
        path = ROOT / root
        files = [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
        for file in files:
            rel = file.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(file.read_text())):
                if not isinstance(node, ast.JoinedStr):
                    continue
                for value, after in zip(node.values, node.values[1:], strict=False):
                    if not isinstance(value, ast.FormattedValue):
                        continue
                    if not isinstance(after, ast.Constant) or not isinstance(after.value, str):
                        continue
                    word = re.match(r" ([a-z]+)\b(?!/)", after.value)  # not a rate
                    if _a_fraction(node.values, value):
                        continue
                    expr = ast.unparse(value.value)
                    if (
                        word
                        and word.group(1) in NOUNS
                        and expr not in NAMES
                        and (rel, expr) not in NEVER_ONE
                    ):
                        found.append((rel, node.lineno, expr, word.group(1)))
    return found


def test_no_count_stands_beside_a_plural_noun_unchecked() -> None:
    assert _findings() == []


@pytest.mark.parametrize("n", [0, 1, 2, 11])
def test_counted_says_the_noun_plural_unless_one(n: int) -> None:
    assert counted(n, "file") == (f"{n} file" if n == 1 else f"{n} files")
    assert counted(n, "retry").endswith("retry" if n == 1 else "retries")
    assert counted(n, "sandbox").endswith("sandbox" if n == 1 else "sandboxes")
    assert counted(20_000, "character") == "20,000 characters"


@pytest.mark.parametrize(
    ("x", "text"), [(2 / 3, "0.67"), (0.5, "0.5"), (2.0, "2"), (0.001, "0"), (-0.001, "0")]
)
def test_rounded_keeps_two_decimals_at_most(x: float, text: str) -> None:
    assert rounded(x) == text
