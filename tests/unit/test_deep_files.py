"""A file nested deeper than any real one gives one line naming it, never a RecursionError.

Issue 47 defect 9: a deeply nested task.toml, config.toml or selection JSON crashed
``tasks check``, ``run --suite``, ``status`` and ``run --selection`` with Python's
``RecursionError`` (``tomllib`` and ``json`` recurse once per level). The family check
runs every command over every kind of file a user hands durabench, each nested as an
array and as a table; and no module parses TOML or JSON but through
:mod:`durabench.documents`, which holds the limit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from durabench.tasks.suites import BUILTIN_SUITES_DIR
from tests.starter_cli import one_error

REPO = Path(__file__).resolve().parents[2]
DEPTH = 5_000
"""Far past Python's recursion limit (1,000), far short of a file anyone writes."""

TOML_NESTS = {
    "array": "deep = " + "[" * DEPTH + "]" * DEPTH + "\n",
    "table": "deep = " + "{a = " * DEPTH + "1" + "}" * DEPTH + "\n",
}
JSON_NESTS = {
    "array": '{"tasks": ' + "[" * DEPTH + "]" * DEPTH + "}",
    "table": '{"tasks": ' + '{"a": ' * DEPTH + "1" + "}" * DEPTH + "}",
}


def _starter(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "DURABENCH_HOME": str(home), "TEMPORAL_ADDRESS": "127.0.0.1:9"}
    return subprocess.run(
        [sys.executable, "-m", "starter", *args],
        env=full | env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _deep_task(home: Path, nest: str) -> Path:
    task = home / "suites" / "deep" / "tensor-gelu-001"
    shutil.copytree(BUILTIN_SUITES_DIR / "pytorch" / "tensor-gelu-001", task)
    toml = task / "task.toml"
    toml.write_text(TOML_NESTS[nest] + toml.read_text())
    return task


@pytest.mark.parametrize("nest", sorted(TOML_NESTS))
@pytest.mark.parametrize("command", ["tasks check", "run --suite"])
def test_a_deep_task_toml_is_one_line(tmp_path: Path, nest: str, command: str) -> None:
    task = _deep_task(tmp_path, nest)
    args = ["tasks", "check", str(task)] if command == "tasks check" else ["run", "--suite"]
    if command == "run --suite":
        args += ["deep", "--yes"]
    proc = _starter(tmp_path, *args)
    if command == "tasks check":  # a line per task, then the count
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        line = proc.stderr.splitlines()[0]
    else:
        line = one_error(proc)
    assert "task.toml" in line and "nested" in line


@pytest.mark.parametrize("nest", sorted(TOML_NESTS))
@pytest.mark.parametrize("command", [("status",), ("report", "x"), ("audit", "x")])
def test_a_deep_config_toml_is_one_line(tmp_path: Path, nest: str, command: tuple[str]) -> None:
    (tmp_path / "config.toml").write_text(TOML_NESTS[nest])
    line = one_error(_starter(tmp_path, *command))
    assert "config.toml" in line and "nested" in line


@pytest.mark.parametrize("nest", sorted(TOML_NESTS))
def test_a_deep_accounts_toml_is_one_line(tmp_path: Path, nest: str) -> None:
    (tmp_path / "accounts.toml").write_text(TOML_NESTS[nest])
    line = one_error(_starter(tmp_path, "accounts", "status"))
    assert "accounts.toml" in line and "nested" in line


@pytest.mark.parametrize("nest", sorted(JSON_NESTS))
@pytest.mark.parametrize(
    ("kind", "args"),
    [
        ("selection", ("run", "--selection", "{file}", "--yes")),
        (
            "dataset",
            ("run", "--dataset-file", "{file}", "--service-url", "http://127.0.0.1:9", "--yes"),
        ),
        ("config registry", ("run", "--suite", "pytorch", "--yes")),
    ],
)
def test_a_deep_json_file_is_one_line(
    tmp_path: Path, nest: str, kind: str, args: tuple[str, ...]
) -> None:
    file = tmp_path / "deep.json"
    file.write_text(JSON_NESTS[nest])
    env = {"DURABENCH_CONFIG_REGISTRY": str(file)} if kind == "config registry" else {}
    line = one_error(_starter(tmp_path, *(a.format(file=file) for a in args), **env))
    assert str(file) in line and "nested" in line


PARSERS = re.compile(r"\b(?:json\.loads?|tomllib\.loads?)\(")


def test_every_toml_and_json_parse_goes_through_documents() -> None:
    """Only durabench/documents.py calls the parsers (gateway/ is out of this branch's hands)."""
    found = []
    for part in ("durabench", "starter", "activities", "runtime"):
        for path in sorted((REPO / part).rglob("*.py")):
            if path.name == "documents.py" or "gateway" in path.parts:
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if PARSERS.search(line):
                    found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not found, "parse through durabench.documents:\n" + "\n".join(found)
