"""Numbers and attempt names read from text another program wrote: one strict reader each.

``str.isdigit`` then ``int`` crashes on ``²`` and reads ``١`` as 1; ``startswith("attempt-")``
or a glob ``attempt-*`` takes ``attempt-01`` for an attempt. Each reader is one function
(:func:`durabench.numerals.read_int`, :func:`durabench.settings.paths.attempt_number`), and
the tree is searched for any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from durabench.numerals import read_int
from durabench.results.viewer import ViewerSite
from tests.unit.finished_run import RUN, write_run

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    p
    for part in ("durabench", "activities", "workflows", "runtime", "starter", "bench")
    for p in (REPO / part).rglob("*.py")
) + [REPO / "worker.py"]


@pytest.mark.parametrize(
    ("text", "signed", "number"),
    [
        ("0", False, 0),
        ("42", False, 42),
        ("-3", True, -3),
        ("-3", False, None),
        ("²", False, None),
        ("١", False, None),  # int() would read it as 1
        ("１", False, None),  # a fullwidth one
        (" 1", False, None),
        ("1\n", False, None),
        ("+1", True, None),
        ("1_000", False, None),
        ("", False, None),
        pytest.param("9" * 5000, False, None, id="5000 digits"),  # int() refuses them
    ],
)
def test_read_int_takes_ascii_digits_only(text: str, signed: bool, number: int | None) -> None:
    assert read_int(text, signed=signed) == number


def _loose(path: Path) -> list[str]:
    """Each call of a ``str.isdigit``-like method, and each call that matches a name
    against ``attempt-`` (a prefix test, a glob), in ``path``'s code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in _LOOSE_METHODS:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _MATCHERS and "attempt-" in ast.unparse(node):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    return found


_MATCHERS = {"removeprefix", "startswith", "glob", "rglob", "fnmatch", "match", "fullmatch"}
_LOOSE_METHODS = {"isdigit", "isdecimal", "isnumeric"}


def test_no_reader_of_numbers_or_attempt_names_but_the_two() -> None:
    """Defect 7's family: every ``isdigit``-like check and every loose attempt-name match."""
    allowed = {REPO / "durabench" / "settings" / "paths.py"}
    found = [line for path in SOURCES if path not in allowed for line in _loose(path)]
    assert found == []


@pytest.mark.parametrize("start", ["²", "١", pytest.param("9" * 5000, id="5000 digits"), "-1", "x"])
def test_the_viewer_reads_any_from_as_the_first_step(tmp_path: Path, start: str) -> None:
    run = write_run(tmp_path, service=False)
    site = ViewerSite(run.paths.root.parent)
    answer = site.answer(f"/runs/{RUN}/tasks/t1/baseline/attempt-1/?from={start}")
    assert answer.status == 200
