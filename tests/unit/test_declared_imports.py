"""Every third-party module durabench imports is declared in pyproject.toml.

A package reached only through another's dependencies (botocore through s3fs, h11 through
uvicorn) moves when that one changes its own: what the code imports, it declares. The
extras' packages are imported only by the module that needs the extra.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
OWN = {"durabench", "workflows", "activities", "runtime", "starter", "worker"}
SOURCES = ("durabench", "workflows", "activities", "runtime", "starter")
EXTRA_USERS = {
    "s3": ("durabench/results/store/object_store.py",),
    "daytona": ("durabench/sandbox/daytona/",),
}
"""The extras a runtime module may import, and the modules that may."""


def _imports() -> dict[str, set[str]]:
    """Each third-party top-level module imported, to the files importing it."""
    files = [p for d in SOURCES for p in (REPO / d).rglob("*.py") if "suites" not in p.parts]
    found: dict[str, set[str]] = {}
    for path in [*files, REPO / "worker.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for top in {n.partition(".")[0] for n in names} - OWN:
                if top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(path.relative_to(REPO).as_posix())
    return found


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def test_what_the_code_imports_it_declares() -> None:
    base = _names(PROJECT["dependencies"])
    extras = {e: _names(PROJECT["optional-dependencies"][e]) for e in EXTRA_USERS}
    dists = packages_distributions()
    imports = _imports()
    assert {"temporalio", "h11", "botocore"} <= set(imports)  # the scan sees them
    for module, files in sorted(imports.items()):
        names = {canonicalize_name(d) for d in dists.get(module, [module])}
        if names & base:
            continue
        extra = next((e for e, declared in extras.items() if names & declared), None)
        assert extra is not None, f"{module} (imported by {sorted(files)}) is not declared"
        allowed = EXTRA_USERS[extra]
        stray = [f for f in files if not f.startswith(allowed)]
        assert not stray, f"{module} is the {extra} extra's, yet {stray} import it"
