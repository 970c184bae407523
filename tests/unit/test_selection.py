"""Selection files and CodeScaleBench checkouts: tasks found, every mistake named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from durabench.errors import ConfigError, TaskFormatError, UnknownConfig
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.planning.plan import make_plan
from durabench.settings.values import Settings
from durabench.tasks import BUILTIN_SUITES_DIR
from durabench.tasks.selection import load_selection, read_selection

PYTORCH = BUILTIN_SUITES_DIR / "pytorch"


def _checkout(root: Path, entries: list[dict[str, str]]) -> Path:
    """A CodeScaleBench-like checkout holding two builtin tasks under benchmarks/."""
    for name in ("tensor-gelu-001", "tensor-broadcast-001"):
        shutil.copytree(PYTORCH / name, root / "benchmarks" / "csb_pytorch" / name)
    (root / "configs").mkdir(parents=True)
    doc = {"metadata": {"suite": "csb_pytorch"}, "tasks": entries}
    (root / "configs" / "selected_benchmark_tasks.json").write_text(json.dumps(doc))
    return root


def _entry(task_id: str, benchmark: str = "csb_pytorch", task_dir: str = "") -> dict[str, str]:
    return {"task_id": task_id, "benchmark": benchmark, "task_dir": task_dir or task_id}


def _settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


def test_the_shared_selection_file_reads_and_names_its_missing_task_dirs(
    shared_fixtures: Path,
) -> None:
    path = shared_fixtures / "selection_file.json"
    selection = read_selection(path)
    assert [(e.task_id, e.benchmark) for e in selection.tasks] == [
        ("linux-hda-intel-suspend-fault-001", "csb_sdlc_debug")
    ]
    with pytest.raises(ConfigError, match="1 task directory is missing: csb_sdlc_debug/linux-hda"):
        load_selection(str(path), None)


def test_a_checkout_gives_its_default_selection_and_suites_by_benchmark(tmp_path: Path) -> None:
    entries = [
        _entry("TENSOR-GELU-001", task_dir="csb_pytorch/tensor-gelu-001"),
        _entry("tensor-broadcast-001", "other", "csb_pytorch/tensor-broadcast-001"),
    ]
    checkout = _checkout(tmp_path / "csb", entries)
    req = RunRequest(run_id="r", suite="", benchmarks_dir=str(checkout))
    plan = make_plan(req, _settings(tmp_path))
    assert [t.task_id for t in plan.tasks] == ["tensor-gelu-001", "tensor-broadcast-001"]
    assert plan.selection_file == str(checkout / "configs" / "selected_benchmark_tasks.json")

    by_benchmark = make_plan(req.model_copy(update={"suite": "csb_pytorch"}), _settings(tmp_path))
    assert [t.task_id for t in by_benchmark.tasks] == ["tensor-gelu-001"]
    with pytest.raises(ConfigError, match="has no task of benchmark 'nope'"):
        make_plan(req.model_copy(update={"suite": "nope"}), _settings(tmp_path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"is not JSON \(line 1, column 2"),
        ('{"tasks": [{"task_id": "a"}]}', r"tasks\.0\.benchmark: Field required"),
        ('{"metadata": {}}', r"tasks: Field required"),
    ],
)
def test_a_broken_selection_file_is_one_clear_error(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "sel.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        read_selection(path)


def test_a_task_listed_twice_in_any_case_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sel.json"
    path.write_text(json.dumps({"tasks": [_entry("Task-1"), _entry("task-1")]}))
    with pytest.raises(ConfigError, match="lists task 'task-1' twice \\(as 'Task-1' too"):
        read_selection(path)


def test_missing_task_dirs_are_listed_with_where_they_were_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "sel.json"
    path.write_text(json.dumps({"tasks": [_entry(f"t{i}", task_dir=f"b/t{i}") for i in range(7)]}))
    with pytest.raises(ConfigError) as missing:
        load_selection(str(path), None)
    assert "7 task directories are missing: b/t0, b/t1, b/t2, b/t3, b/t4 and 2 more" in str(
        missing.value
    )
    assert str(tmp_path) in str(missing.value)


def test_an_entry_whose_dir_holds_another_task_is_refused(tmp_path: Path) -> None:
    checkout = _checkout(
        tmp_path / "csb", [_entry("wrong-id", task_dir="csb_pytorch/tensor-gelu-001")]
    )
    with pytest.raises(TaskFormatError, match="holds task 'tensor-gelu-001', not 'wrong-id'"):
        load_selection(None, str(checkout))


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"agent": AgentSpec(model="Claude Sonnet 4.5")}, ConfigError, "is not a model id"),
        ({"full_config": "nope"}, UnknownConfig, "unknown config 'nope'; known configs"),
        ({"suite": "nope"}, ConfigError, "unknown suite 'nope'"),
        ({"agent": AgentSpec(name="nope")}, ConfigError, "nope"),
    ],
)
def test_bad_names_fail_at_plan_time(
    tmp_path: Path, change: dict[str, object], error: type[Exception], message: str
) -> None:
    req = RunRequest.model_validate({"run_id": "r", "suite": "pytorch"} | change)
    with pytest.raises(error, match=message):
        make_plan(req, _settings(tmp_path))


def test_model_ids_of_every_provider_pass(tmp_path: Path) -> None:
    for model in (
        "none",
        "claude-sonnet-4-5",
        "anthropic/claude-opus-4-1",
        "gpt-5-codex",
        "gemini-2.5-pro",
        "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
    ):
        plan = make_plan(
            RunRequest(run_id="r", suite="pytorch", agent=AgentSpec(model=model)),
            _settings(tmp_path),
        )
        assert plan.request.agent.model == model


def test_parallel_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        RunRequest(run_id="r", suite="pytorch", parallel=0)
