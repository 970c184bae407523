"""durabench refuses to run where another distribution installs one of its top-level names."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from durabench import install_check
from durabench.errors import ConfigError
from durabench.install_check import TOP_LEVEL, check_install, shared_names
from starter.verbs import LazyGroup, Verb

REPO = Path(__file__).resolve().parents[2]


def test_the_guarded_names_are_every_top_level_name_pyproject_installs() -> None:
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {p.rstrip("*") for p in setuptools["packages"]["find"]["include"]}
    assert set(TOP_LEVEL) == packages | set(setuptools["py-modules"])
    on_disk = {p.name for p in REPO.iterdir() if (p / "__init__.py").is_file()}
    assert on_disk - {"tests"} <= set(TOP_LEVEL)  # a new package is installed and guarded


def test_only_other_distributions_sharing_a_name_are_reported() -> None:
    owners = {
        "workflows": ["durabench", "workflows"],
        "runtime": ["Durabench"],
        "worker": ["worker", "another"],
        "requests": ["requests"],
    }
    assert shared_names(owners) == {"worker": ("another", "worker"), "workflows": ("workflows",)}
    with pytest.raises(ConfigError) as refused:
        check_install(owners)
    said = str(refused.value)
    assert "'workflows' also by workflows" in said and "'worker' also by another, worker" in said
    assert "environment of its own" in said and "docs/contributing.md" in said


def test_this_install_shares_no_name() -> None:
    check_install()


def test_a_verb_that_fails_to_import_over_a_shared_name_is_refused_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        install_check, "packages_distributions", lambda: {"starter": ["durabench", "starter"]}
    )
    group = LazyGroup(name="cli", verbs={"gone": Verb("starter.no_such_module:gone", "Gone.")})
    result = CliRunner().invoke(group, ["gone"])
    assert result.exit_code == 1, result.output
    assert "'starter' also by starter" in result.output
    monkeypatch.setattr(install_check, "packages_distributions", dict)
    result = CliRunner().invoke(group, ["gone"])  # no shared name: the import error itself
    assert isinstance(result.exception, ModuleNotFoundError)
