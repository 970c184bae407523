"""Apply each hand-written mistake of ``tests/unit/hand_mutants.toml``; say which a test catches.

mutmut's mutants are syntactic (``<`` for ``<=``, a string changed); these are the mistakes
a developer would make (an infra retry in a mean, a refusal name dropped, a snapshot taken
for its model), each listed with the test that must fail on it. For each, in a scratch copy
of the tree (uncommitted changes included; the checkout is never edited), the one edit is
made, its tests run, and the edit undone. The listed tests must pass on the unedited copy
first, or a failure would prove nothing.

    python scripts/hand_mutants.py                # every mistake
    python scripts/hand_mutants.py audit gateway  # the mistakes of some modules

Exits 1 when a mistake survives (no listed test failed) or a listed test fails unedited.
The workflow tier's tests start a Temporal dev server, as they do under pytest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIST = REPO / "tests" / "unit" / "hand_mutants.toml"
COPIED = ("durabench", "tests", "runtime", "workflows", "activities", "starter", "scripts")


@dataclass(frozen=True)
class Mistake:
    """One hand-written mistake: where, the text it changes, and the tests that catch it."""

    module: str
    what: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


def load_mistakes(path: Path = LIST) -> list[Mistake]:
    """The listed mistakes, in file order."""
    data = tomllib.loads(path.read_text())
    return [Mistake(**{**m, "tests": tuple(m["tests"])}) for m in data["mistake"]]


def _pytest(dest: Path, tests: tuple[str, ...]) -> bool:
    """Whether ``tests`` pass in the copy (its own code, never an installed checkout's)."""
    env = {**os.environ, "PYTHONPATH": str(dest)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    done = subprocess.run(cmd, cwd=dest, env=env, capture_output=True, text=True, check=False)
    return done.returncode == 0


def caught(dest: Path, m: Mistake) -> bool:
    """Whether one of ``m``'s tests fails with the mistake made in the copy."""
    path = dest / m.file
    source = path.read_text()
    if source.count(m.old) != 1:
        sys.exit(f"{m.file}: the text of {m.what!r} occurs {source.count(m.old)} times, not once")
    try:
        path.write_text(source.replace(m.old, m.new))
        return not _pytest(dest, m.tests)
    finally:
        path.write_text(source)


def main() -> None:
    """Try the chosen modules' mistakes in a scratch copy; print each one's fate."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", help="only these modules' mistakes")
    args = parser.parse_args()
    chosen = [m for m in load_mistakes() if not args.modules or m.module in args.modules]
    dest = Path(tempfile.mkdtemp(prefix="durabench-hand-mutants-"))
    try:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
        for name in COPIED:
            shutil.copytree(REPO / name, dest / name, ignore=ignore)
        for name in ("worker.py", "pyproject.toml"):
            shutil.copy2(REPO / name, dest / name)
        tests = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
        if not _pytest(dest, tests):
            sys.exit("a listed test fails before any mistake is made: fix it first")
        missed = 0
        for m in chosen:
            ok = caught(dest, m)
            missed += not ok
            print(f"{'caught  ' if ok else 'SURVIVED'} {m.module:10} {m.what}")
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    print(f"{len(chosen) - missed} of {len(chosen)} hand-written mistakes caught")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
