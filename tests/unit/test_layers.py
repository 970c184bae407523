"""The tree's layers hold: no import runs back up a layer, and no import cycle.

From the bottom: the domain (``durabench``, no Temporal), ``activities``, ``workflows``
(which call activities by reference, so a reader and mypy follow each call),
``runtime`` (connecting, workers, sweeping), then the CLI (``starter``) and the
benchmarks (``bench``, which use the runtime, never the CLI), then ``worker.py``. Imports
inside functions count: a lazy import that runs up a layer is the same cycle, hidden.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAYERS = {
    "durabench": 0,
    "activities": 1,
    "workflows": 2,
    "runtime": 3,
    "starter": 4,
    "bench": 4,
    "worker": 5,
}
"""Each top-level part and its layer; a part imports only parts of lower layers (and itself)."""


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[0] == "bench":  # scripts that import each other by file name
        parts = parts[1:]
        return "bench" if parts == ["__init__"] else f"bench.{parts[-1].lstrip('_')}"
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    found = {"worker": REPO / "worker.py"}
    for part in LAYERS:
        for path in (REPO / part).rglob("*.py") if (REPO / part).is_dir() else ():
            if "suites" not in path.parts:
                found[_module(path)] = path
    return found


def _imported(path: Path, module: str) -> Iterator[str]:
    """Every name an import statement in ``path`` may load, wherever the statement is."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*kept, *([node.module] if node.module else [])])
            if path.is_relative_to(REPO / "bench") and not node.level:
                base = f"bench.{base.lstrip('_')}" if base.startswith("_") else base
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _graph() -> dict[str, set[str]]:
    sources = _sources()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in sources.items():
        graph[module] |= {name for name in _imported(path, module) if name in sources} - {module}
    return graph


def _part(module: str) -> str:
    return module.split(".")[0]


def test_no_import_runs_up_a_layer() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if _part(target) != _part(module) and LAYERS[_part(target)] >= LAYERS[_part(module)]
    ]
    assert upward == []


def test_no_import_cycle() -> None:
    graph = _graph()
    cycles: list[list[str]] = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert cycles == []


def test_the_graph_sees_imports_inside_functions() -> None:
    """The checks above would pass vacuously if lazy imports went unseen."""
    graph = _graph()
    assert "runtime.workers" in graph["starter.work"]  # imported inside the verb
    assert "runtime.embedded" in graph["bench.common"]


def test_settings_import_nothing_of_the_domain_above_them() -> None:
    """Settings are read by every part of the domain (models validate URLs with them), so
    they import none of it but its errors and its parsers (leaves that import nothing of
    durabench): a settings module that imported ``models`` would close a loop."""
    below = ("durabench.settings", "durabench.errors", "durabench.documents")
    upward = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if module.startswith("durabench.settings")
        for target in targets
        if target.startswith("durabench.") and not target.startswith(below)
    ]
    assert upward == []
