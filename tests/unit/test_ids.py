"""Ids that name paths, workflows and containers: real ones pass, hostile ones are refused."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from durabench.configs import load_registry
from durabench.configs.eval_matrix import configs_from_eval_matrix
from durabench.errors import ConfigError, TaskFormatError
from durabench.ids import ID_PATTERN, check_id
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef
from durabench.models.run import RunRequest, TaskRef
from durabench.planning.plan import make_plan
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import BUILTIN_SUITES_DIR, load_task
from durabench.tasks.selection import read_selection
from starter.approve import approve
from starter.report import report
from starter.run import run
from starter.run_request import new_run_id, run_stamp

DOCKER_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]+")
"""What the Docker daemon accepts as a container name."""

REAL = [
    "linux-hda-intel-suspend-fault-001",  # shared selection file
    "CCX-dep-trace-001",  # shared harbor task
    "tensor-broadcast-001",  # bundled pytorch suite
    "t1",  # service dataset example
    "q:1",  # a grading service's dataset id
    "django__django-11099",  # SWE-bench style
    "pytorch-20260101-120000-ab12",  # a generated run id
    "r-expiring",
    "baseline",
    "sourcegraph_full",
    "1",
    "a" * 128,
]

HOSTILE = [
    "../../x",
    "..",
    ".",
    "a/b",
    "/abs",
    "",
    ".hidden",
    "-rf",
    ":x",
    "a b",
    " a",
    "a\tb",
    "a\nb",
    "a\n",
    "a\0b",
    "a\\b",
    "tâche",
    "a" * 129,
]


@pytest.mark.parametrize("value", REAL)
def test_real_ids_pass(value: str) -> None:
    assert check_id(value, "task id") == value


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_ids_are_refused_with_the_pattern_and_a_fix(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_id(value, "task id")
    message = str(err.value)
    assert message.startswith("task id ")
    assert "letters, digits" in message and "rename" in message
    assert "\n" not in message and "\0" not in message


def test_a_very_long_id_is_not_quoted_in_full() -> None:
    with pytest.raises(ConfigError, match="129 characters") as err:
        check_id("a" * 129, "run id")
    assert len(str(err.value)) < 400


def test_every_shipped_and_shared_id_passes(shared_fixtures: Path) -> None:
    ids = [e.task_id for e in read_selection(shared_fixtures / "selection_file.json").tasks]
    tomls = [*(shared_fixtures / "harbor-tasks").glob("*/task.toml")]
    tomls += [*BUILTIN_SUITES_DIR.glob("*/*/task.toml")]
    ids += [tomllib.loads(p.read_text())["task"]["id"] for p in tomls]
    dataset = json.loads((shared_fixtures / "service" / "dataset_file.example.json").read_text())
    ids += [t["id"] for t in dataset["tests"]]
    matrix = json.loads((shared_fixtures / "eval_matrix.json").read_text())
    ids += [c.name for c in configs_from_eval_matrix(matrix, load_registry())]
    ids += list(load_registry())
    assert len(ids) > 10
    for value in ids:
        check_id(value, "id")


def test_the_pattern_is_one_path_component_and_never_an_option() -> None:
    assert re.fullmatch(ID_PATTERN, "x/y") is None
    assert re.fullmatch(ID_PATTERN, "-x") is None


def _ref(
    task_id: str, run_id: str = "r1", lane: str = "baseline", placement: int = 0
) -> AttemptRef:
    task = TaskRef(task_id=task_id, task_dir="/t")
    return AttemptRef(
        run_id=run_id,
        task=task,
        lane=lane,
        agent=AgentSpec(name="oracle", model="none"),
        placement=placement,
    )


def test_container_names_are_readable_and_stable() -> None:
    assert _ref("t1").container_name.startswith("durabench-r1-t1-baseline-1-")
    assert _ref("t1", placement=2).container_name.startswith("durabench-r1-t1-baseline-1-p2-")
    assert _ref("t1").container_name == _ref("t1").container_name


def test_container_names_differ_where_hyphens_would_join_ids() -> None:
    assert _ref("c", run_id="a-b").container_name != _ref("b-c", run_id="a").container_name
    assert _ref("t", lane="sg-full").container_name != _ref("t-sg", lane="full").container_name


def test_container_names_differ_when_only_sanitising_would_join_them() -> None:
    names = {_ref(t).container_name for t in ("q:1", "q-1", "q::1", "q;1")}
    assert len(names) == 4
    for name in names:
        assert DOCKER_NAME.fullmatch(name), name
    assert _ref("q:1").container_name == _ref("q:1").container_name  # stable


def test_attempt_dirs_never_leave_the_run(tmp_path: Path) -> None:
    run = RunPaths.for_run(tmp_path / "runs", "r1")
    assert (
        run.attempt("q:1", "baseline", 2) == run.root / "tasks" / "q:1" / "baseline" / "attempt-2"
    )
    for task_id, lane in [("../../x", "baseline"), ("..", "baseline"), ("a/b", "baseline")]:
        with pytest.raises(ConfigError, match="outside"):
            run.attempt(task_id, lane, 1)
    for task_id, lane in [("t1", "../x"), ("t1", ".."), ("", "baseline"), ("t\0", "baseline")]:
        with pytest.raises(ConfigError):
            run.attempt(task_id, lane, 1)


def test_attempt_dirs_refuse_a_link_out_of_the_run(tmp_path: Path) -> None:
    run = RunPaths.for_run(tmp_path / "runs", "r1")
    (run.root / "tasks").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (run.root / "tasks" / "t1").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="outside"):
        run.attempt("t1", "baseline", 1)


@pytest.mark.parametrize("run_id", ["../x", "..", "a/b", ""])
def test_run_dirs_never_leave_the_runs_dir(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(ConfigError, match="run id"):
        RunPaths.for_run(tmp_path / "runs", run_id)


def test_a_task_toml_id_that_is_not_an_id_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for rel, text in {
        "task.toml": "[task]\nid = '../../x'\n",
        "instruction.md": "do it",
        "environment/Dockerfile": "FROM scratch",
        "tests/test.sh": "true",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    with pytest.raises(TaskFormatError, match=r"task\.toml.*'\.\./\.\./x'"):
        load_task(root)


def test_a_selection_task_id_that_is_not_an_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sel.json"
    entry = {"task_id": "../x", "benchmark": "b", "task_dir": "b/x"}
    path.write_text(json.dumps({"tasks": [entry]}))
    with pytest.raises(ConfigError, match=r"sel\.json.*'\.\./x'"):
        read_selection(path)


def test_a_lane_name_that_is_not_an_id_is_refused(tmp_path: Path) -> None:
    extra = tmp_path / "configs.json"
    extra.write_text(json.dumps({"configs": [{"name": "../lane"}]}))
    with pytest.raises(ConfigError, match=r"configs\.json.*'\.\./lane'"):
        load_registry(extra)


@pytest.mark.parametrize("field", ["run_id", "rerun_of"])
def test_a_run_id_that_is_not_an_id_is_refused_before_planning(tmp_path: Path, field: str) -> None:
    request = RunRequest(run_id="r1", suite="pytorch").model_copy(update={field: "../x"})
    with pytest.raises(ConfigError, match=r"'\.\./x'"):
        make_plan(request, Settings(home=tmp_path))


@pytest.mark.parametrize("source", ["pytorch", "my selection", "../x", "q:1/a", "", "-x"])
def test_generated_run_ids_are_ids(source: str) -> None:
    check_id(new_run_id(source, run_stamp()), "run id")


def test_a_lane_instruction_file_outside_the_task_is_refused(tmp_path: Path) -> None:
    extra = tmp_path / "configs.json"
    lane = {"name": "mine", "instruction_file": "../../../etc/passwd"}
    extra.write_text(json.dumps({"configs": [lane]}))
    with pytest.raises(ConfigError, match=r"instruction file '\.\./\.\./\.\./etc/passwd'"):
        load_registry(extra)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        (report, ["../../x"]),
        (approve, ["a/b"]),
        (run, ["--suite", "pytorch", "--run-id", "../x"]),
        (run, ["--rerun", "all", "--from", "../x"]),
    ],
)
def test_the_cli_refuses_a_run_id_that_is_not_an_id(
    command: click.Command, args: list[str]
) -> None:
    result = CliRunner().invoke(command, args)  # not the group: it would configure logging
    assert result.exit_code == 2
    assert "run id" in result.output and "is not a valid id" in result.output
