"""Every file a finished run publishes, and every field of every JSON in it, is covered.

The family check of issue 47 (its "done when"): for every file under a finished run one
edit, one deletion and one addition (a file beside it), for every field of every published
JSON one edit, one deletion and one addition (a field beside it), for every list a
duplicate entry, and for every attempt an alias directory; after each, the audit names the
file and publish refuses the run. Fields are taken once per place in a file's schema
(``attempts[*].reward`` once per file, not once per attempt), every file once.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from durabench.errors import ConfigError
from durabench.models.audit import AuditReport, Finding
from durabench.results.dashboard import publish
from durabench.settings.paths import attempt_number
from tests.unit.finished_run import RUN, Run, audit, write_run

Where = tuple[str | int, ...]
"""A place in a JSON document: keys and list indexes from the top."""


def _names(finding: Finding, path: str) -> bool:
    """Whether ``finding`` names ``path`` (under the run): as where it is, as a file in the
    attempt it is about, or as the directory holding it."""
    if path == finding.where or path.startswith(finding.where + "/"):
        return True
    attempt = f"tasks/{finding.where}/"
    return path.startswith(attempt) and path.removeprefix(attempt) in finding.message


def _refused(run: Run, names: str, what: str) -> None:
    """The audit names the file ``names`` (a path under the run), and publish refuses.

    A plan.json that is not a plan leaves nothing to check: the audit stops with one line
    naming it, and so does publish, which audits first.
    """
    try:
        report: AuditReport = audit(run)
    except ConfigError as exc:
        assert names == "plan.json" and "plan.json" in str(exc), (what, str(exc))
        assert "\n" not in str(exc) and exc.__cause__ is None, (what, str(exc))
        return
    assert any(_names(f, names) for f in report.findings), (what, report.lines())
    # refused for its findings, or (results.json damaged or gone) for want of results
    with pytest.raises(ConfigError, match="is not published|results") as refused:
        publish(run.paths.root.parent, run.board.parent / "board.json", RUN, report)
    assert "\n" not in str(refused.value)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _leaves(data: Any, at: Where = ()) -> Iterator[Where]:
    """Every field of ``data`` (an empty list or object is a field too), depth first."""
    children: list[tuple[str | int, Any]] = (
        list(data.items())
        if isinstance(data, dict)
        else list(enumerate(data))
        if isinstance(data, list)
        else []
    )
    if not children:
        yield at
    for key, value in children:
        yield from _leaves(value, (*at, key))


def _containers(data: Any, at: Where = ()) -> Iterator[tuple[Where, Any]]:
    if isinstance(data, (dict, list)):
        yield at, data
        for key, value in data.items() if isinstance(data, dict) else enumerate(data):
            yield from _containers(value, (*at, key))


def _once(places: Iterator[Where]) -> list[Where]:
    """One place per place in the schema (list indexes as ``*``)."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for at in places:
        shape = tuple("*" if isinstance(k, int) else k for k in at)
        if shape not in seen:
            seen.add(shape)
            out.append(at)
    return out


def _get(data: Any, at: Where) -> Any:
    for key in at:
        data = data[key]
    return data


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return [1]
    if isinstance(value, dict):
        return {"x": 1}
    return 1  # null


def _dump(data: Any, like: str) -> str:
    """``data`` written as the file ``like`` was (pydantic's compact or indented JSON)."""
    if like.startswith("{\n"):
        return json.dumps(data, indent=2, ensure_ascii=False)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _json_files(root: Path) -> list[str]:
    """The run's JSON files, one of each kind (an attempt's, a lane's) and the run's own."""
    kinds: dict[str, str] = {}
    for name in _files(root):
        if name.endswith(".json"):
            parts = name.split("/")
            kind = "/".join(["tasks", "*", "*", "*", *parts[4:]]) if parts[0] == "tasks" else name
            kinds.setdefault(kind, name)
    return sorted(kinds.values())


def _edits(root: Path) -> list[tuple[str, str, Callable[[Any], None]]]:
    """(file, what, change): for every field an edit, a deletion and a field added beside it,
    and for every list a duplicate entry."""
    out: list[tuple[str, str, Callable[[Any], None]]] = []
    for name in _json_files(root):
        data = json.loads((root / name).read_text())
        for at in _once(_leaves(data)):
            if not at:
                continue
            parent, key = at[:-1], at[-1]

            def edit(d: Any, p: Where = parent, k: Any = key) -> None:
                _get(d, p)[k] = _changed(_get(d, p)[k])

            def delete(d: Any, p: Where = parent, k: Any = key) -> None:
                del _get(d, p)[k]

            out += [(name, f"edit {at}", edit), (name, f"delete {at}", delete)]
        for at, found in _once_containers(data):
            if isinstance(found, dict):

                def add(d: Any, p: Where = at) -> None:
                    _get(d, p)["planted"] = 1

                out.append((name, f"add a field to {at}", add))
            elif found:

                def twice(d: Any, p: Where = at) -> None:
                    _get(d, p).append(_get(d, p)[0])

                out.append((name, f"duplicate the first entry of {at}", twice))
    return out


def _once_containers(data: Any) -> list[tuple[Where, Any]]:
    found = dict(_containers(data))
    return [(at, found[at]) for at in _once(iter(found))]


def test_every_json_is_written_as_its_writer_writes_it(tmp_path: Path) -> None:
    """The edits below change one field and nothing else: unchanged, each file reads back
    to its own bytes."""
    root = write_run(tmp_path, service=True).paths.root
    for name in _json_files(root):
        text = (root / name).read_text()
        assert _dump(json.loads(text), text) == text, name


def test_every_field_edited_deleted_added_or_duplicated_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    root = run.paths.root
    edits = _edits(root)
    assert len(edits) > 300  # every field of result.json, results.json, plan.json, ...
    for name, what, change in edits:
        path = root / name
        before = path.read_bytes()
        data = json.loads(before)
        change(data)
        path.write_text(_dump(data, before.decode()))
        _refused(run, name, f"{name}: {what}")
        path.write_bytes(before)


def test_every_file_edited_deleted_or_with_one_beside_it_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    root = run.paths.root
    for name in _files(root):
        path = root / name
        before = path.read_bytes()
        path.write_bytes(before + b" ")
        _refused(run, name, f"{name}: a byte added")
        path.unlink()
        _refused(run, name, f"{name}: deleted")
        path.write_bytes(before)
        beside = path.with_name("planted.txt")
        beside.write_text("all pass\n")
        _refused(run, beside.relative_to(root).as_posix(), f"a file beside {name}")
        beside.unlink()


def test_every_directory_with_a_file_planted_or_an_alias_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, service=True)
    root = run.paths.root
    directories = sorted(p for p in root.rglob("*") if p.is_dir())
    for directory in [root, *directories]:
        planted = directory / "planted.txt"
        planted.write_text("all pass\n")
        _refused(run, planted.relative_to(root).as_posix(), f"a file in {directory}")
        planted.unlink()
        number = attempt_number(directory.name)
        if number is not None:
            alias = directory.with_name(f"attempt-0{number}")
            shutil.copytree(directory, alias)
            _refused(run, alias.relative_to(root).as_posix(), f"an alias of {directory}")
            shutil.rmtree(alias)
