from pathlib import Path

import pytest

from durabench.errors import TaskFormatError, UnknownSuite
from durabench.tasks import known_suites, load_suite, load_task


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
