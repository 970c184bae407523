"""Every ``DURABENCH_*`` variable is read through :mod:`durabench.settings`, nowhere else.

So each one is validated and documented in one place. A read is ``os.environ[...]``,
``.get``, ``.pop``, ``.setdefault``, ``in os.environ`` or ``os.getenv``, with the name
written out or held in a module's constant (resolved by importing the module).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PARTS = ("durabench", "activities", "workflows", "runtime", "starter")
READS = {"get", "pop", "setdefault", "__getitem__"}


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _keys(tree: ast.AST) -> Iterator[tuple[int, ast.AST]]:
    """The key expression of every environment read in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            yield node.lineno, node.slice
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in READS and _is_environ(func.value):
                yield node.lineno, node.args[0]
            elif isinstance(func, ast.Attribute) and func.attr == "getenv":
                yield node.lineno, node.args[0]
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            yield node.lineno, node.left


def _name(key: ast.AST, module: str) -> str:
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    if isinstance(key, ast.Name):
        value = getattr(importlib.import_module(module), key.id, None)
        return value if isinstance(value, str) else ""
    return ""


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_durabench_variable_is_read_outside_settings() -> None:
    reads = []
    paths = [REPO / "worker.py"] + [p for part in PARTS for p in (REPO / part).rglob("*.py")]
    for path in paths:
        if "settings" in path.relative_to(REPO).parts or "suites" in path.parts:
            continue
        module = _module(path)
        for line, key in _keys(ast.parse(path.read_text())):
            if _name(key, module).startswith("DURABENCH_"):
                reads.append(f"{path.relative_to(REPO)}:{line} reads {_name(key, module)}")
    assert reads == []


def test_the_scan_sees_the_reads_settings_make() -> None:
    """The check above would pass vacuously if reads through constants went unseen."""
    path = REPO / "durabench" / "settings" / "environment.py"
    module = "durabench.settings.environment"
    names = {_name(key, module) for _, key in _keys(ast.parse(path.read_text()))}
    assert names >= {
        "DURABENCH_LOG_LEVEL",
        "DURABENCH_CONFIG_REGISTRY",
        "DURABENCH_ALLOW_UNKNOWN_MODEL",
        "DURABENCH_GATEWAY_SPEC",
    }
