"""README's commands work as written: a newcomer copies them, in order, on a plain machine.

What can be checked without Docker or a server is: the two commands a newcomer needs (the
first run, and the tests as CI runs them) are there; every ``python -m starter`` line parses
as its verb's options; none needs ``sudo`` (absent as root on plain Debian); and the lines
that write ``config.toml`` write it where every command reads it, whatever
``DURABENCH_HOME`` says.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import click
import pytest

from durabench.planning.base_image import base_image_refusal
from durabench.settings.values import Settings
from starter.main import cli

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CI = REPO / ".ci" / "run"
FENCE = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def _bash_lines() -> list[str]:
    return [
        line.strip()
        for block in FENCE.findall(README.read_text())
        for line in block.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


def _words(line: str) -> list[str]:
    return shlex.split(line, comments=True)


def _ci_test_command() -> list[str]:
    """The pytest line .ci/run ends with, as a person types it (``python``, no CI flags)."""
    last = [line for line in CI.read_text().splitlines() if "-m pytest" in line][-1]
    words = ["python" if w == "python3" else w for w in _words(last)]
    return [w for w in words if not w.startswith("--durations")]


def test_readme_has_the_first_run_and_the_test_command_ci_runs() -> None:
    commands = [_words(line) for line in _bash_lines()]
    assert ["python", "-m", "starter", "run", "--suite", "pytorch", "--agent", "oracle"] in commands
    assert _ci_test_command() == ["python", "-m", "pytest"]
    assert _ci_test_command() in commands, "README does not say how to run the tests"
    assert ["pip", "install", "-e", ".[dev]"] in commands, "README installs no test tools"


def _starter_lines() -> list[list[str]]:
    return [w[3:] for w in map(_words, _bash_lines()) if w[:3] == ["python", "-m", "starter"]]


@pytest.mark.parametrize("args", _starter_lines(), ids=lambda a: " ".join(a))
def test_every_starter_command_in_readme_parses(args: list[str]) -> None:
    args = [re.sub(r"<[a-z-]+>", "r1", a) for a in args]
    group = click.Context(cli)
    command = cli.get_command(group, args[0])
    assert command is not None, f"README names no verb {args[0]!r}"
    command.make_context(args[0], args[1:], parent=group)  # raises on an unknown option


def test_no_readme_command_needs_sudo() -> None:
    """Plain Debian as root has no sudo; README says where root is needed instead."""
    assert [line for line in _bash_lines() if _words(line)[:1] == ["sudo"]] == []


@pytest.mark.parametrize("durabench_home", [None, "elsewhere"])
def test_the_readme_config_lines_write_where_settings_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durabench_home: str | None
) -> None:
    """Run as written, with and without DURABENCH_HOME: every command then reads the image."""
    block = next((b for b in FENCE.findall(README.read_text()) if "config.toml" in b), "")
    assert block, "README shows no config.toml"
    needs_root = ("apt-get", "scripts/build-base-image.sh")
    lines = [line for line in block.splitlines() if not line.startswith(needs_root)]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "user")}
    if durabench_home is not None:
        env["DURABENCH_HOME"] = str(tmp_path / durabench_home)
    subprocess.run(["bash", "-euc", "\n".join(lines)], env=env, check=True, cwd=tmp_path)
    for name in [n for n in os.environ if n.startswith("DURABENCH_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", env["HOME"])
    if durabench_home is not None:
        monkeypatch.setenv("DURABENCH_HOME", env["DURABENCH_HOME"])
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    assert Settings.from_env().base_image == "durabench-base:bookworm"


def test_the_base_image_refusal_names_the_config_file_not_an_export(tmp_path: Path) -> None:
    """The fix outlives the shell: the line to add, and the file every command reads."""
    config = tmp_path / "home" / "config.toml"
    said = str(base_image_refusal("python:3.12-slim", "no registry", config))
    assert f'add the line base_image = "durabench-base:bookworm" to {config}' in said
    assert "scripts/build-base-image.sh" in said and "export" not in said
