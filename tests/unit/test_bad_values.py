"""A value of the right syntax but out of range or of the wrong kind is refused in one line.

Issue 47 defect 10: ``port = 99999999999`` in config.toml crashed with ``OverflowError``;
``report --pass-threshold nan`` printed "pass = mean reward ≥ nan"; ``category = [1, 2,
{a = 1}]`` in task.toml was read as the text of the list. The family checks: every number
setting refuses NaN, infinities and numbers past any sane setting, naming itself; every
text field of task.toml refuses a list, a table, a boolean and a date, naming itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from durabench.errors import ConfigError, TaskFormatError
from durabench.settings.sources import env_name
from durabench.settings.values import Settings
from durabench.tasks import load_task
from durabench.tasks.suites import BUILTIN_SUITES_DIR
from starter.main import cli
from tests.starter_cli import one_error
from tests.unit.finished_run import RUN, write_run


def _numeric_fields() -> list[str]:
    """Every setting whose value is a number (``int``, ``float``, or one of them or None)."""
    found = []
    for name, field in Settings.model_fields.items():
        if field.annotation in (int, float, int | None, float | None):
            found.append(name)
    return found


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own and none of the number settings in the environment."""
    monkeypatch.chdir(tmp_path)
    for name in _numeric_fields():
        monkeypatch.delenv(env_name(Settings, name), raising=False)
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    return tmp_path


def test_the_family_is_not_empty() -> None:
    assert {"port", "ui_port", "pass_threshold", "sandbox_cpus"} <= set(_numeric_fields())


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "99999999999999999999"])
@pytest.mark.parametrize("name", _numeric_fields())
def test_every_number_setting_refuses_what_no_one_means(home: Path, name: str, value: str) -> None:
    """Each is refused by the settings model, in a line that names the setting."""
    key = env_name(Settings, name).removeprefix("DURABENCH_").lower()
    (home / "config.toml").write_text(f"{key} = {value}\n")
    with pytest.raises(ConfigError) as caught:
        Settings.from_env()
    assert key in str(caught.value).lower() and "\n" not in str(caught.value)


def test_a_port_past_65535_is_one_line(home: Path) -> None:
    (home / "config.toml").write_text("port = 99999999999\n")
    env = {**os.environ, "DURABENCH_HOME": str(home), "TEMPORAL_ADDRESS": ""}
    proc = subprocess.run(
        [sys.executable, "-m", "starter", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "port" in one_error(proc)


@pytest.mark.parametrize("value", ["0.5", "0", "1"])
def test_a_pass_threshold_from_0_to_1_is_read(home: Path, value: str) -> None:
    (home / "config.toml").write_text(f"pass_threshold = {value}\n")
    assert Settings.from_env().pass_threshold == float(value)


@pytest.mark.parametrize("value", ["nan", "inf", "-0.5", "1.5"])
def test_report_refuses_a_pass_threshold_that_is_not_one(tmp_path: Path, value: str) -> None:
    write_run(tmp_path, service=False)
    env = {**os.environ, "DURABENCH_HOME": str(tmp_path), "TEMPORAL_ADDRESS": "127.0.0.1:9"}
    proc = subprocess.run(
        [sys.executable, "-m", "starter", "report", RUN, "--pass-threshold", value],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--pass-threshold" in proc.stderr and "Traceback" not in proc.stderr
    assert "≥" not in proc.stdout


TEXT_FIELDS = [
    ("task", "category"),
    ("metadata", "category"),
    ("task", "difficulty"),
    ("metadata", "difficulty"),
    ("task", "language"),
    ("task", "repo"),
    ("metadata", "description"),
    ("task", "description"),
    ("verification", "command"),
    ("verification", "build_command"),
]
"""Every text task.toml gives a :class:`TaskSpec` field (the id has its own checks)."""

NOT_TEXT = {
    "list": "[1, 2, {a = 1}]",
    "table": "{a = 1}",
    "boolean": "true",
    "date": "2025-01-01",
}


def _task_with(tmp_path: Path, section: str, field: str, value: str) -> Path:
    task = tmp_path / "task"
    shutil.copytree(BUILTIN_SUITES_DIR / "pytorch" / "tensor-gelu-001", task)
    toml = task / "task.toml"
    lines = toml.read_text().splitlines()
    kept = [line for line in lines if not line.startswith(f"{field} =")]
    at = kept.index(f"[{section}]") if f"[{section}]" in kept else None
    if at is None:
        kept += [f"[{section}]", f"{field} = {value}"]
    else:
        kept.insert(at + 1, f"{field} = {value}")
    toml.write_text("\n".join(kept) + "\n")
    return task


@pytest.mark.parametrize("kind", sorted(NOT_TEXT))
@pytest.mark.parametrize(("section", "field"), TEXT_FIELDS)
def test_every_text_field_of_a_task_refuses_what_is_not_text(
    tmp_path: Path, section: str, field: str, kind: str
) -> None:
    task = _task_with(tmp_path, section, field, NOT_TEXT[kind])
    with pytest.raises(TaskFormatError) as caught:
        load_task(task)
    assert f"[{section}] {field}" in str(caught.value) and "task.toml" in str(caught.value)


@pytest.mark.parametrize(("section", "field"), TEXT_FIELDS)
def test_every_text_field_of_a_task_reads_text(tmp_path: Path, section: str, field: str) -> None:
    """The same edit with text loads (so the refusals above are for the kind, not the edit)."""
    load_task(_task_with(tmp_path, section, field, '"plain"'))


def _number_params() -> list[tuple[str, click.Parameter]]:
    """Every number option and argument of every command, by its command's path."""
    found = []
    todo: list[tuple[str, click.Command]] = [("starter", cli)]
    while todo:
        path, command = todo.pop()
        if isinstance(command, click.Group):  # verbs load lazily: ask the group for each
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                todo += [(f"{path} {name}", sub)] if sub is not None else []
        for param in command.params:
            if isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
                found.append((f"{path} {param.name}", param))
    return sorted(found, key=lambda item: item[0])


NUMBER_PARAMS = _number_params()


def test_the_number_flags_are_found() -> None:
    names = {name for name, _ in NUMBER_PARAMS}
    assert {"starter report pass_threshold", "starter run parallel", "starter view port"} <= names


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "99999999999999999999"])
@pytest.mark.parametrize(("name", "param"), NUMBER_PARAMS, ids=[n for n, _ in NUMBER_PARAMS])
def test_every_number_flag_refuses_what_no_one_means(
    name: str, param: click.Parameter, value: str
) -> None:
    """Each is refused as click's usage error (exit 2, naming the flag), never passed on."""
    with pytest.raises(click.BadParameter):
        param.type.convert(value, param, None)


@pytest.mark.parametrize("field", ["rpm", "tpm"])
def test_a_rate_limit_past_any_sane_one_is_refused(home: Path, field: str) -> None:
    """The numbers inside DURABENCH_MODEL_RATE_LIMITS hold the same limit as settings."""
    other = "tpm" if field == "rpm" else "rpm"
    (home / "config.toml").write_text(
        f"[model_rate_limits.claude-sonnet-4-5]\n{field} = 99999999999999999999\n{other} = 10\n"
    )
    with pytest.raises(ConfigError) as caught:
        Settings.from_env()
    assert "model_rate_limits" in str(caught.value).lower()
