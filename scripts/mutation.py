"""Mutation testing of the modules that decide a published number: kill rate per module.

A test suite can pass and still let a wrong number through; mutation testing measures
that. mutmut makes small deliberate bugs (mutants) in each module below, runs the unit
tests that exercise the mutated function, and records whether some test failed (killed)
or none did (survived). Survivors that cannot change behaviour (equivalent mutants) are
listed, with why, in ``scripts/mutation_equivalent.toml`` and left out of the rate; any
other survivor is a gap in the tests and is printed with its diff.

    pip install -e '.[mutation]'
    python scripts/mutation.py                      # all five modules
    python scripts/mutation.py scoring approval     # some of them
    python scripts/mutation.py --unit-tier meter    # against all of tests/unit

It works on a copy of the work tree (uncommitted changes included) in a temporary
directory, so the checkout is never mutated. Mutants run one at a time at low priority
(``nice``): the machine is shared. Slow (minutes), so not part of CI; re-run it when one
of these modules or its tests change and update docs/mutation.md. Exits 1 when a module is
under the target.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EQUIVALENT_FILE = REPO / "scripts" / "mutation_equivalent.toml"
TARGET = 0.90
COPIED = ("durabench", "tests", "runtime", "workflows", "activities", "starter")
BOOKKEEPING = ("tests/unit/test_mutation_tool.py", "tests/unit/test_hand_mutants.py")
"""Tests of the lists of mutants: one fails on any edit of a line listed as an equivalent
mutant or a hand-written mistake, which is bookkeeping, not a kill, so no mutant is run
against them."""
KILLED = {"killed", "timeout", "caught by type check", "segfault"}
NOT_KILLED = {"survived", "no tests", "suspicious"}
SPINNER = re.compile("[\u2800-\u28ff]")
"""mutmut's progress spinner (braille dots), redrawn on one line many times a second."""


@dataclass(frozen=True)
class Module:
    """A module under mutation and the unit tests that exercise it (globs, from the root)."""

    path: str
    tests: tuple[str, ...]

    @property
    def dotted(self) -> str:
        """The import name mutmut prefixes each of its mutants with."""
        return self.path.removesuffix(".py").replace("/", ".")


U = "tests/unit/"
MODULES = {
    "meter": Module(
        "durabench/gateway/meter.py",
        # not test_gateway.py nor test_gateway_process.py: they start the gateway's own
        # process, whose exit mutmut's runner takes for one of its mutants' and crashes on
        tuple(
            f"{U}test_gateway_{part}.py"
            for part in ("meter", "budget", "body", "ledger", "model", "allowlist", "outage")
        )
        + (f"{U}test_meter*.py", f"{U}test_classify_metered.py"),
    ),
    "classifier": Module(
        "durabench/classify/classifier.py",
        (
            f"{U}test_classif*.py",
            f"{U}test_real_cli_transcripts.py",
            f"{U}test_cli_failure_fixtures.py",
        ),
    ),
    "scoring": Module(
        "durabench/results/scoring.py",
        (f"{U}test_scoring*.py", f"{U}test_report.py", f"{U}test_results_store_index.py"),
    ),
    "stats": Module("durabench/results/stats.py", (f"{U}test_stats*.py", f"{U}test_scoring*.py")),
    "approval": Module("durabench/planning/approval.py", (f"{U}test_approval*.py",)),
}


@dataclass(frozen=True)
class Equivalent:
    """A mutant judged unable to change behaviour: where, and the line before and after."""

    module: str
    function: str
    before: str
    after: str
    why: str


def load_equivalents() -> list[Equivalent]:
    """The reviewed equivalent mutants; matched by the changed line, not by mutmut's number."""
    data = tomllib.loads(EQUIVALENT_FILE.read_text())
    return [Equivalent(**entry) for entry in data.get("equivalent", [])]


def copy_tree(dest: Path) -> None:
    """The packages and tests as they are on disk, so uncommitted work is measured too."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in COPIED:
        shutil.copytree(REPO / name, dest / name, ignore=ignore)
    for name in ("worker.py", "pyproject.toml"):
        shutil.copy2(REPO / name, dest / name)


def write_config(dest: Path, modules: list[Module], unit_tier: bool) -> None:
    """Append mutmut's settings to the copy's pyproject.toml (the checkout's stays as it is)."""
    if unit_tier:
        tests = ["tests/unit"]
    else:
        tests = sorted(
            {str(p.relative_to(dest)) for m in modules for g in m.tests for p in dest.glob(g)}
            - set(BOOKKEEPING)
        )
    ignored = [f"--ignore={path}" for path in BOOKKEEPING]
    quoted = ", ".join(f'"{t}"' for t in tests)
    only = ", ".join(f'"{m.path}"' for m in modules)
    # Into mutants/ too: what is not there is imported from wherever the project is
    # installed (an editable install may point at another checkout).
    also = ", ".join(f'"{name}"' for name in (*COPIED[2:], "worker.py"))
    with (dest / "pyproject.toml").open("a") as out:
        out.write(
            "\n[tool.mutmut]\n"
            'source_paths = ["durabench/"]\n'
            f"also_copy = [{also}]\n"
            f"only_mutate = [{only}]\n"
            f"pytest_add_cli_args_test_selection = [{quoted}]\n"
            f"pytest_add_cli_args = {json.dumps(['-p', 'no:cacheprovider', '-q', *ignored])}\n"
        )


def mutmut(dest: Path, *args: str) -> str:
    """Run mutmut in the copy, where its ``mutants/`` tree must win over the checkout's code.

    PYTHONPATH is dropped so that nothing points the tests back at an unmutated checkout.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = ["nice", "-n", "10", sys.executable, "-m", "mutmut", *args]
    done = subprocess.run(cmd, cwd=dest, env=env, text=True, capture_output=True, check=False)
    if done.returncode != 0:
        # Without its progress spinner, so that a failing test's output is what remains.
        said = "\n".join(ln for ln in done.stdout.splitlines() if not SPINNER.search(ln))
        sys.exit(f"mutmut {' '.join(args)} failed:\n{said[-6000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def function_of(mutant: str) -> str:
    """``mcnemar_exact`` out of ``durabench.results.stats.x_mcnemar_exact__mutmut_4``.

    A method's mutant is named ``x\u01c1Class\u01c1method__mutmut_N``: its function is ``method``.
    """
    function = mutant.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]
    return function.rsplit("\u01c1", 1)[-1] if "\u01c1" in function else function.removeprefix("x_")


def changed_lines(diff: str) -> tuple[str, str]:
    """The removed and the added line of a mutant's diff, stripped (several joined by ' / ')."""
    lines = [ln for ln in diff.splitlines() if not ln.startswith(("---", "+++"))]
    before = " / ".join(ln[1:].strip() for ln in lines if ln.startswith("-"))
    after = " / ".join(ln[1:].strip() for ln in lines if ln.startswith("+"))
    return before, after


@dataclass
class Tally:
    """What became of one module's mutants."""

    statuses: Counter[str]
    equivalent: list[tuple[str, str]]
    survivors: list[tuple[str, str]]

    @property
    def rate(self) -> float:
        """Killed over the mutants that could be killed (all but the equivalent ones)."""
        killed = sum(n for s, n in self.statuses.items() if s in KILLED)
        counted = sum(self.statuses.values()) - len(self.equivalent)
        return killed / counted if counted else 1.0


def tally(dest: Path, module: Module, results: dict[str, str], known: list[Equivalent]) -> Tally:
    """Sort a module's mutants into killed, equivalent (reviewed) and surviving."""
    mine = {k: v for k, v in results.items() if k.startswith(module.dotted + ".")}
    odd = set(mine.values()) - KILLED - NOT_KILLED
    if odd:
        sys.exit(f"{module.path}: mutants left {sorted(odd)}; run again")
    result = Tally(Counter(mine.values()), [], [])
    for name, status in sorted(mine.items()):
        if status in KILLED:
            continue
        diff = mutmut(dest, "show", name)
        where = (module.path, function_of(name), *changed_lines(diff))
        why = next(
            (e.why for e in known if (e.module, e.function, e.before, e.after) == where), None
        )
        if why is None:
            result.survivors.append((f"{name} ({status})", diff))
        else:
            result.equivalent.append((f"- {where[2]}\n+ {where[3]}", why))
    return result


def report(module: Module, t: Tally, verbose: bool) -> None:
    """One line per module; the survivors that still need a test, with their diffs."""
    killed = sum(n for s, n in t.statuses.items() if s in KILLED)
    total = sum(t.statuses.values())
    print(
        f"{module.path:36} {total:4} mutants {killed:4} killed {len(t.equivalent):3} equivalent "
        f"{len(t.survivors):3} survived  kill rate {t.rate:6.1%}"
    )
    for name, diff in t.survivors:
        print(f"  SURVIVED {name}\n" + re.sub(r"(?m)^", "    ", diff.strip()))
    if verbose:
        for change, why in t.equivalent:
            print(f"  equivalent: {why}\n" + re.sub(r"(?m)^", "    ", change))


def main() -> None:
    """Mutate the chosen modules in a scratch copy and print each one's kill rate."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", help=f"some of: {', '.join(MODULES)}")
    parser.add_argument("--unit-tier", action="store_true", help="run all of tests/unit")
    parser.add_argument("--verbose", action="store_true", help="list the equivalent mutants")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy")
    args = parser.parse_args()
    unknown = set(args.modules) - set(MODULES)
    if unknown:
        parser.error(
            f"no module named {', '.join(sorted(unknown))}; choose from {', '.join(MODULES)}"
        )
    chosen = [MODULES[name] for name in (args.modules or MODULES)]
    dest = Path(tempfile.mkdtemp(prefix="durabench-mutation-"))
    try:
        copy_tree(dest)
        write_config(dest, chosen, args.unit_tier)
        mutmut(dest, "run", "--max-children", "1")
        lines = mutmut(dest, "results", "--all", "true").splitlines()
        results = dict(ln.strip().rsplit(": ", 1) for ln in lines if ": " in ln)
        known = load_equivalents()
        tallies = [(m, tally(dest, m, results, known)) for m in chosen]
    finally:
        if args.keep:
            print(f"scratch copy kept at {dest}")
        else:
            shutil.rmtree(dest, ignore_errors=True)
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO, text=True, capture_output=True
    ).stdout.strip()
    print(f"mutation testing at {commit}, target {TARGET:.0%} of non-equivalent mutants killed")
    for module, t in tallies:
        report(module, t, args.verbose)
    sys.exit(0 if all(t.rate >= TARGET for _, t in tallies) else 1)


if __name__ == "__main__":
    main()
