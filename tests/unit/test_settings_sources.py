"""Where settings come from: the environment over ``.env`` over ``config.toml`` over defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.settings.values import Settings
from tests.starter_cli import one_error

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own, a working directory of its own, none of the variables set."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for var in ("DURABENCH_SANDBOX_PIDS", "DURABENCH_INFRA_RETRIES", "DURABENCH_TASK_QUEUE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_a_config_file_value_is_overridden_by_dotenv_and_then_the_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "config.toml").write_text(
        'sandbox_pids = 64\ninfra_retries = 5\ntask_queue = "from-file"\n'
        'task_roots = ["/srv/a", "/srv/b"]\n'
    )
    settings = Settings.from_env()
    assert (settings.sandbox_pids, settings.infra_retries, settings.task_queue) == (
        64,
        5,
        "from-file",
    )
    assert settings.task_roots == (Path("/srv/a"), Path("/srv/b"))
    Path(".env").write_text("DURABENCH_SANDBOX_PIDS=128\nDURABENCH_TASK_QUEUE=from-dotenv\n")
    settings = Settings.from_env()
    assert (settings.sandbox_pids, settings.infra_retries, settings.task_queue) == (
        128,
        5,
        "from-dotenv",
    )
    monkeypatch.setenv("DURABENCH_SANDBOX_PIDS", "256")
    settings = Settings.from_env()
    assert (settings.sandbox_pids, settings.task_queue) == (256, "from-dotenv")


def test_dotenv_names_the_home_whose_config_file_is_read(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.toml").write_text("infra_retries = 7\n")
    monkeypatch.delenv("DURABENCH_HOME")
    Path(".env").write_text(f"DURABENCH_HOME={other}\n")
    settings = Settings.from_env()
    assert (settings.home, settings.infra_retries) == (other, 7)


def test_an_empty_variable_counts_as_unset(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / "config.toml").write_text("sandbox_pids = 64\n")
    monkeypatch.setenv("DURABENCH_SANDBOX_PIDS", "")
    assert Settings.from_env().sandbox_pids == 64


@pytest.mark.parametrize(
    ("where", "text", "expected"),
    [
        ("config.toml", "sandbox_pids = 0\n", r"sandbox_pids = 0 in .*config\.toml"),
        (".env", "DURABENCH_SANDBOX_PIDS=many\n", r"DURABENCH_SANDBOX_PIDS='many' in .*\.env"),
        ("config.toml", "sandbox_pid = 64\n", r"unknown setting 'sandbox_pid' in .*config\.toml"),
        ("config.toml", "sandbox_pids = \n", r"cannot read .*config\.toml"),
    ],
)
def test_a_bad_value_is_one_error_that_names_the_setting_and_its_file(
    home: Path, where: str, text: str, expected: str
) -> None:
    (home / where if where == "config.toml" else Path(where)).write_text(text)
    with pytest.raises(ConfigError, match=expected) as err:
        Settings.from_env()
    assert "\n" not in str(err.value)


def test_the_environment_wins_over_a_bad_file_value(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "config.toml").write_text("sandbox_pids = 0\n")
    monkeypatch.setenv("DURABENCH_SANDBOX_PIDS", "9")
    assert Settings.from_env().sandbox_pids == 9


def test_explicit_settings_read_nothing_from_the_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DURABENCH_SANDBOX_PIDS", "9")
    Path(".env").write_text("DURABENCH_INFRA_RETRIES=6\n")
    settings = Settings(home=home)
    assert (settings.sandbox_pids, settings.infra_retries) == (1024, 2)
    read = Settings.from_env()
    assert (read.home, read.sandbox_pids, read.infra_retries) == (home, 9, 6)


@pytest.mark.parametrize("command", [["status"], ["worker"]])
def test_the_cli_and_the_worker_refuse_a_bad_file_value_in_one_line(
    home: Path, command: list[str]
) -> None:
    (home / "config.toml").write_text("max_sandboxes = 0\n")
    proc = subprocess.run(
        [sys.executable, "-m", "starter", *command],
        cwd=REPO,
        env={**os.environ, "DURABENCH_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    line = one_error(proc)
    assert f"max_sandboxes = 0 in {home / 'config.toml'}" in line
    assert "greater than or equal to 1" in line
