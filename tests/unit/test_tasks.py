import os
import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from durabench.errors import ConfigError, TaskFormatError, UnknownSuite
from durabench.tasks import known_suites, load_suite, load_task, task_files
from starter.tasks import tasks


def test_builtin_pytorch_suite_has_four_solvable_tasks() -> None:
    tasks = load_suite("pytorch")
    assert len(tasks) >= 4
    assert all(t.has_solution and t.has_mcp_instruction for t in tasks)
    assert any("Dockerfile.sg_only" in t.dockerfiles for t in tasks)
    assert len({t.task_id for t in tasks}) == len(tasks)


def test_unknown_suite_lists_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UnknownSuite) as err:
        load_suite("nope", tmp_path)
    assert "pytorch" in str(err.value)
    assert str(tmp_path / "suites") in str(err.value)


def test_user_suite_under_home_is_found(tmp_path: Path) -> None:
    builtin = load_suite("pytorch")[0]
    mine = tmp_path / "suites" / "mine"
    mine.mkdir(parents=True)
    (mine / "t1").symlink_to(builtin.task_dir)
    assert "mine" in known_suites(tmp_path)
    assert [t.task_id for t in load_suite("mine", tmp_path)] == [builtin.task_id]


def _make_task(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("missing", ["task.toml", "tests/test.sh", "environment/Dockerfile"])
def test_missing_file_is_named(tmp_path: Path, missing: str) -> None:
    files = {
        "task.toml": "[task]\nid = 'x'\n",
        "instruction.md": "do it",
        "environment/Dockerfile": "FROM scratch",
        "tests/test.sh": "true",
    }
    del files[missing]
    with pytest.raises(TaskFormatError, match=missing):
        load_task(_make_task(tmp_path / "t", files))


def test_task_toml_fields_are_read(tmp_path: Path) -> None:
    root = _make_task(
        tmp_path / "t",
        {
            "task.toml": (
                "[task]\nid = 'abc-1'\nrepo = 'r'\ncategory = 'c'\ntime_limit_sec = 42\n"
                "[verification]\ncommand = 'bash /tests/run.sh'\n"
            ),
            "instruction.md": "do it",
            "environment/Dockerfile": "FROM scratch",
            "environment/Dockerfile.sg_only": "FROM scratch",
            "tests/test.sh": "true",
        },
    )
    task = load_task(root)
    assert (task.task_id, task.repo, task.category) == ("abc-1", "r", "c")
    assert task.time_limit_sec == 42
    assert task.verifier_command == "bash /tests/run.sh"
    assert task.dockerfiles == ("Dockerfile", "Dockerfile.sg_only")
    assert not task.has_mcp_instruction and not task.has_solution


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    root = _make_task(
        tmp_path / "t",
        {
            "task.toml": "[task\n",
            "instruction.md": "x",
            "environment/Dockerfile": "x",
            "tests/test.sh": "x",
        },
    )
    with pytest.raises(TaskFormatError, match="task.toml"):
        load_task(root)


def test_shared_harbor_fixtures_load(shared_fixtures: Path) -> None:
    task = load_task(shared_fixtures / "harbor-tasks" / "pytorch-relu-gelu-fusion-fix-001")
    assert task.language == "cpp"
    assert "Dockerfile.sg_only" in task.dockerfiles
    assert task.has_mcp_instruction
    every = sorted(p for p in (shared_fixtures / "harbor-tasks").iterdir() if p.is_dir())
    assert len(every) >= 2
    assert all(load_task(p).dialects == ("codescalebench",) for p in every)


def _harbor_task(root: Path, toml: str) -> Path:
    return _make_task(
        root,
        {
            "task.toml": toml,
            "instruction.md": "do it",
            "environment/Dockerfile": "FROM scratch",
            "tests/test.sh": "true",
        },
    )


_HARBOR_TOML = """schema_version = "1.4"
[task]
name = "acme/hello-world"
description = "say hello"
[metadata]
difficulty = "easy"
category = "greeting"
[agent]
timeout_sec = 120.0
[verifier]
timeout_sec = 30.0
[environment]
build_timeout_sec = 99.0
"""


def test_a_harbor_task_toml_is_read_in_harbors_field_names(tmp_path: Path) -> None:
    task = load_task(_harbor_task(tmp_path / "dir-name", _HARBOR_TOML))
    assert task.dialects == ("harbor",)
    assert task.task_id == "hello-world"
    assert (task.description, task.difficulty, task.category) == ("say hello", "easy", "greeting")
    assert task.time_limit_sec == 120
    assert task.verifier_timeout_sec == 30
    assert task.build_timeout_sec == 99


def test_a_harbor_task_without_limits_gets_harbors_build_default(tmp_path: Path) -> None:
    task = load_task(_harbor_task(tmp_path / "t", "[task]\nname = 'acme/x'\n"))
    assert task.dialects == ("harbor",)
    assert task.build_timeout_sec == 600
    assert task.time_limit_sec == 600


def test_a_harbor_task_with_no_task_section_is_named_by_its_directory(tmp_path: Path) -> None:
    task = load_task(_harbor_task(tmp_path / "old-harbor", "[agent]\ntimeout_sec = 60\n"))
    assert (task.task_id, task.dialects, task.time_limit_sec) == ("old-harbor", ("harbor",), 60)


@pytest.mark.parametrize("name", ["hello", "acme/x/y", "acme/../x", "-acme/x", "acme/"])
def test_a_harbor_name_that_is_not_org_slash_name_is_refused(tmp_path: Path, name: str) -> None:
    root = _harbor_task(tmp_path / "t", f"[task]\nname = '{name}'\n")
    with pytest.raises(TaskFormatError) as err:
        load_task(root)
    assert "[task] name" in str(err.value) and "org/name" in str(err.value)
    assert str(root / "task.toml") in str(err.value)


def test_a_harbor_task_on_a_prebuilt_image_is_told_how_to_run_here(tmp_path: Path) -> None:
    toml = "[task]\nname = 'acme/x'\n[environment]\ndocker_image = 'alpine:3'\n"
    root = _harbor_task(tmp_path / "t", toml)
    (root / "environment" / "Dockerfile").unlink()
    with pytest.raises(TaskFormatError) as err:
        load_task(root)
    assert "docker_image" in str(err.value)
    assert "FROM alpine:3" in str(err.value)


def test_both_dialects_must_name_the_same_task(tmp_path: Path) -> None:
    root = _harbor_task(tmp_path / "t", "[task]\nid = 'a-1'\nname = 'acme/b-1'\n")
    with pytest.raises(TaskFormatError, match=r"'a-1'.*'acme/b-1'"):
        load_task(root)


def test_both_dialects_must_give_the_same_time_limit(tmp_path: Path) -> None:
    root = _harbor_task(
        tmp_path / "t",
        "[task]\nid = 'a-1'\nname = 'acme/a-1'\ntime_limit_sec = 300\n[agent]\ntimeout_sec = 600\n",
    )
    with pytest.raises(TaskFormatError, match=r"time_limit_sec.*timeout_sec"):
        load_task(root)


def test_every_bundled_task_is_valid_in_both_dialects() -> None:
    for task in load_suite("pytorch"):
        assert task.dialects == ("codescalebench", "harbor"), task.task_dir
        doc = tomllib.loads((Path(task.task_dir) / "task.toml").read_text())
        assert doc["task"]["name"] == f"durabench/{task.task_id}"
        assert doc["agent"]["timeout_sec"] == doc["task"]["time_limit_sec"]
        assert "build_timeout_sec" in doc["environment"]


def test_tasks_check_says_which_dialect_it_read(tmp_path: Path) -> None:
    good = load_suite("pytorch")[0].task_dir
    harbor = _harbor_task(tmp_path / "t", _HARBOR_TOML)
    result = CliRunner().invoke(tasks, ["check", good, str(harbor)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "task.toml read as CodeScaleBench and Harbor" in lines[1]
    assert any(ln.strip() == "task.toml read as Harbor" for ln in lines)


def _task_with_tests(root: Path) -> Path:
    return _make_task(
        root,
        {
            "task.toml": "[task]\nid = 'linked'\n",
            "instruction.md": "do it",
            "environment/Dockerfile": "FROM scratch",
            "tests/test.sh": "true",
            "tests/data/case.txt": "1",
        },
    )


def test_task_files_lists_regular_files_and_links_that_stay_inside(tmp_path: Path) -> None:
    task = _task_with_tests(tmp_path / "t")
    (task / "tests" / "again.sh").symlink_to("test.sh")
    (task / "tests" / "instr.md").symlink_to(task / "instruction.md")
    tests = task / "tests"
    assert task_files(tests, task_dir=task) == [
        tests / "again.sh",
        tests / "data" / "case.txt",
        tests / "instr.md",
        tests / "test.sh",
    ]
    assert task_files(task / "solution") == []


def test_task_files_refuses_a_link_to_a_host_file(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = x")
    task = _task_with_tests(tmp_path / "t")
    (task / "tests" / "x").symlink_to(secret)
    with pytest.raises(ConfigError) as err:
        task_files(task / "tests", task_dir=task)
    message = str(err.value)
    assert str(task / "tests" / "x") in message and str(secret) in message
    assert "outside the task" in message and "copy" in message
    with pytest.raises(ConfigError, match="outside the task"):
        task_files(task)


def test_task_files_refuses_a_relative_link_that_climbs_out(tmp_path: Path) -> None:
    (tmp_path / "k").write_text("key")
    task = _task_with_tests(tmp_path / "t")
    (task / "tests" / "data" / "k").symlink_to("../../../k")
    with pytest.raises(ConfigError, match=r"\.\./\.\./\.\./k"):
        task_files(task / "tests", task_dir=task)


def test_task_files_refuses_directory_links(tmp_path: Path) -> None:
    (tmp_path / "home" / ".aws").mkdir(parents=True)
    (tmp_path / "home" / ".aws" / "credentials").write_text("key")
    task = _task_with_tests(tmp_path / "t")
    (task / "tests" / "aws").symlink_to(tmp_path / "home" / ".aws")
    with pytest.raises(ConfigError, match="outside the task"):
        task_files(task / "tests", task_dir=task)
    (task / "tests" / "aws").unlink()
    (task / "tests" / "loop").symlink_to(".")
    with pytest.raises(ConfigError, match="directory"):
        task_files(task / "tests", task_dir=task)


def test_task_files_refuses_a_subdirectory_that_is_a_link_out(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f").write_text("x")
    task = _task_with_tests(tmp_path / "t")
    (task / "solution").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="outside the task"):
        task_files(task / "solution", task_dir=task)


def test_task_files_refuses_a_special_file(tmp_path: Path) -> None:
    task = _task_with_tests(tmp_path / "t")
    os.mkfifo(task / "tests" / "pipe")
    with pytest.raises(ConfigError, match="not a regular file"):
        task_files(task / "tests", task_dir=task)


def test_tasks_check_refuses_a_task_linking_out_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "credentials").write_text("key")
    task = _task_with_tests(tmp_path / "a-rather-long-directory-name-to-force-wrapping" / "t")
    (task / "tests" / "x").symlink_to(tmp_path / "credentials")
    good = load_suite("pytorch")[0].task_dir
    result = CliRunner().invoke(tasks, ["check", good, str(task)])
    assert result.exit_code == 1
    [line] = [ln for ln in result.stderr.splitlines() if ln.startswith("invalid:")]
    assert str(task / "tests" / "x") in line and "outside the task" in line
    assert "1 of 2 task directories are invalid" in result.stderr


def test_tasks_check_refuses_a_hostile_id(tmp_path: Path) -> None:
    task = _task_with_tests(tmp_path / "t")
    (task / "task.toml").write_text("[task]\nid = '../../x'\n")
    result = CliRunner().invoke(tasks, ["check", str(task)])
    assert result.exit_code == 1
    assert "'../../x'" in result.stderr and "rename" in result.stderr


def test_a_task_linking_a_host_file_into_its_tests_does_not_load(tmp_path: Path) -> None:
    source = load_suite("pytorch")[0]
    task = tmp_path / "linked"
    shutil.copytree(source.task_dir, task)
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = host-only")
    (task / "tests" / "creds").symlink_to(secret)
    with pytest.raises(TaskFormatError, match="creds"):
        load_task(task)
    (task / "tests" / "creds").unlink()
    (task / "instruction.md").unlink()
    (task / "instruction.md").symlink_to(secret)
    with pytest.raises(TaskFormatError, match="instruction.md is a link"):
        load_task(task)


_LIMITS = [
    ("task", "time_limit_sec"),
    ("agent", "timeout_sec"),
    ("verifier", "timeout_sec"),
    ("environment", "build_timeout_sec"),
]


def _limit_toml(section: str, field: str, value: str) -> str:
    head = "[task]\nid = 'x'\n"
    line = f"{field} = {value}\n"
    return head + (line if section == "task" else f"[{section}]\n{line}")


@pytest.mark.parametrize(("section", "field"), _LIMITS)
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-5", "0", "1e308", "true", "'600'"])
def test_a_limit_out_of_bounds_is_refused_naming_file_and_field(
    tmp_path: Path, section: str, field: str, value: str
) -> None:
    """A non-finite, negative, zero, huge or non-numeric limit never reaches a plan."""
    root = _make_task(
        tmp_path / "t",
        {
            "task.toml": _limit_toml(section, field, value),
            "instruction.md": "do it",
            "environment/Dockerfile": "FROM scratch",
            "tests/test.sh": "true",
        },
    )
    with pytest.raises(TaskFormatError) as err:
        load_task(root)
    said = str(err.value)
    assert str(root / "task.toml") in said and f"[{section}] {field}" in said
    assert "\n" not in said


_LOADED_AS = {
    ("task", "time_limit_sec"): "time_limit_sec",
    ("agent", "timeout_sec"): "time_limit_sec",  # Harbor's name for the agent's limit
    ("verifier", "timeout_sec"): "verifier_timeout_sec",
    ("environment", "build_timeout_sec"): "build_timeout_sec",
}
"""The task spec's field each ``task.toml`` limit becomes."""


@pytest.mark.parametrize(("section", "field"), _LIMITS)
def test_a_limit_in_bounds_loads(tmp_path: Path, section: str, field: str) -> None:
    """7200 in the file is 7,200 s in the spec's own field, not a default (600 or 1,800 s)."""
    root = _make_task(
        tmp_path / "t",
        {
            "task.toml": _limit_toml(section, field, "7200"),
            "instruction.md": "do it",
            "environment/Dockerfile": "FROM scratch",
            "tests/test.sh": "true",
        },
    )
    spec = load_task(root)
    assert getattr(spec, _LOADED_AS[(section, field)]) == 7200.0
