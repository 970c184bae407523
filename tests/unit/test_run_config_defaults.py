"""A ``--config`` file asks for the request the flags would: what it leaves out comes from
the settings, and unpaired runs only from the environment.

A teammate's ``run.toml`` without ``max_spend_usd`` ran uncapped on a machine whose
``config.toml`` set a cap, and ``allow_unpaired = true`` in a file bypassed the gap-fill
rule that only ``ALLOW_UNPAIRED_SINGLE_CONFIG=true`` may. The fields the settings give are
found by what :func:`build_request` does with the settings, not from a list, so a field
the flags take from the settings later is checked here too.
"""

from __future__ import annotations

import tomllib
import types
import typing
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from durabench.models.run import RunRequest
from durabench.planning.plan import UNPAIRED_ENV
from durabench.settings.values import Settings
from starter.run import run
from starter.run_config import dump_request, load_request
from starter.run_request import RunOptions, build_request

STAMP = "20261129-120000-abcd"
OPTIONS = RunOptions(suite="pytorch", run_id="r-1")
BASE = Settings(home=Path("/nonexistent-home"))


def _other(value: Any, annotation: Any) -> Any:
    """A value of ``annotation``'s type unlike ``value`` (``...``: none made)."""
    kinds = set(typing.get_args(annotation)) or {annotation}
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType, None):
        return ...
    if isinstance(value, bool) or kinds == {bool}:
        return not value
    if int in kinds:
        return 777 if value is None else value * 2 + 3
    if float in kinds:
        return 77.5 if value is None else value * 2 + 3.5
    if str in kinds:
        return "x-other" if value is None else f"{value}-other"
    return ...


def _perturbed() -> Settings:
    """``BASE`` with every plain setting (number, flag, text) changed."""
    changed = {}
    for name, field in Settings.model_fields.items():
        value = _other(getattr(BASE, name), field.annotation)
        if value is not ...:
            changed[name] = value
    return BASE.model_copy(update=changed)


SETTINGS = _perturbed()
FLAGS = build_request(OPTIONS, SETTINGS, allow_unpaired=False, stamp=STAMP)
FROM_SETTINGS = sorted(
    name
    for name in RunRequest.model_fields
    if getattr(FLAGS, name)
    != getattr(build_request(OPTIONS, BASE, allow_unpaired=False, stamp=STAMP), name)
)
"""The request fields the flags' path takes from the settings."""


def test_the_settings_fields_are_found() -> None:
    """What the search must find at least (else it finds nothing and checks nothing)."""
    assert {
        "max_spend_usd",
        "budget_tokens",
        "infra_retries",
        "infra_backoff_sec",
        "approval_timeout_sec",
    } <= set(FROM_SETTINGS)


@pytest.mark.parametrize("field", FROM_SETTINGS)
def test_a_file_without_a_settings_field_gets_what_the_flags_get(
    tmp_path: Path, field: str
) -> None:
    lines = dump_request(FLAGS, with_run_id=True).splitlines(keepends=True)
    file = tmp_path / "run.toml"
    file.write_text("".join(line for line in lines if not line.startswith(f"{field} = ")))
    assert field not in tomllib.loads(file.read_text())
    loaded = load_request(file, SETTINGS, allow_unpaired=False, stamp=STAMP)
    assert getattr(loaded, field) == getattr(FLAGS, field)
    assert loaded == FLAGS


@pytest.mark.parametrize("unpaired", [False, True])
def test_a_file_of_the_suite_alone_asks_for_the_flags_request(
    tmp_path: Path, unpaired: bool
) -> None:
    file = tmp_path / "run.toml"
    file.write_text('suite = "pytorch"\nrun_id = "r-1"\n')
    flags = build_request(OPTIONS, SETTINGS, allow_unpaired=unpaired, stamp=STAMP)
    assert load_request(file, SETTINGS, allow_unpaired=unpaired, stamp=STAMP) == flags


def test_a_value_in_the_file_is_kept_over_the_settings(tmp_path: Path) -> None:
    file = tmp_path / "run.toml"
    file.write_text('suite = "pytorch"\nmax_spend_usd = 5.0\ninfra_retries = 0\n')
    loaded = load_request(file, SETTINGS, allow_unpaired=False, stamp=STAMP)
    assert (loaded.max_spend_usd, loaded.infra_retries) == (5.0, 0)


@pytest.mark.parametrize("value", ["true", "false"])
def test_a_file_never_allows_unpaired_runs(tmp_path: Path, value: str) -> None:
    file = tmp_path / "run.toml"
    file.write_text(f'suite = "pytorch"\nconfig_mode = "full_only"\nallow_unpaired = {value}\n')
    with pytest.raises(click.BadParameter) as refused:
        load_request(file, SETTINGS, allow_unpaired=False, stamp=STAMP)
    message = refused.value.format_message()
    assert "allow_unpaired" in message and f"{UNPAIRED_ENV}=true" in message
    assert str(file) in message


def test_a_printed_file_holds_no_unpaired_key() -> None:
    unpaired = build_request(OPTIONS, SETTINGS, allow_unpaired=True, stamp=STAMP)
    assert "allow_unpaired" not in tomllib.loads(dump_request(unpaired, with_run_id=True))


def test_the_machines_spend_cap_holds_for_a_file_that_omits_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config.toml caps spend at $50; a teammate's run.toml says nothing of it."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("max_spend_usd = 50\nbudget_tokens = 200000\n")
    monkeypatch.setenv("DURABENCH_HOME", str(home))
    (tmp_path / "temporal.toml").write_text("")
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(tmp_path / "temporal.toml"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text('suite = "pytorch"\n')
    result = CliRunner().invoke(run, ["-c", "run.toml", "--print-config"])
    assert result.exit_code == 0, result.output
    printed = tomllib.loads(result.output)
    assert (printed["max_spend_usd"], printed["budget_tokens"]) == (50.0, 200_000)
