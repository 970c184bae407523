"""Where settings come from, and which of them gave a bad value.

Highest first: the environment, ``.env`` in the working directory, then
``$DURABENCH_HOME/config.toml``, then the defaults. pydantic-settings reads the first two;
the config file is read here as if its keys were variables (the ``DURABENCH_*`` name
without the prefix, in lower case), so a value means the same wherever it is written and
is parsed the same way.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from dotenv import dotenv_values
from pydantic import ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource

from durabench.documents import loads_toml
from durabench.errors import ConfigError

__all__ = [
    "CONFIG_FILE",
    "ENV_FILE",
    "PREFIX",
    "ConfigFileSource",
    "bad_settings",
    "dotenv_value",
    "env_name",
]

PREFIX = "DURABENCH_"
ENV_FILE = ".env"
"""Read from the working directory of the process."""
CONFIG_FILE = "config.toml"
"""Read from ``DURABENCH_HOME``: one per machine (or per shared home)."""


def env_name(settings_cls: type[BaseSettings], field: str) -> str:
    """The variable of ``field``: its alias where it has one, else ``DURABENCH_<FIELD>``."""
    alias = settings_cls.model_fields[field].validation_alias
    return alias if isinstance(alias, str) else PREFIX + field.upper()


def dotenv_value(name: str) -> str | None:
    """``name`` in ``.env`` (any case, as pydantic-settings reads it), or ``None``."""
    if not Path(ENV_FILE).is_file():
        return None
    found = {k.upper(): v for k, v in dotenv_values(ENV_FILE).items()}
    return found.get(name.upper()) or None


class _FileValue(NamedTuple):
    """One key of the config file: what was written, and the variable's text for it."""

    written: Any
    text: str


def _as_text(key: str, value: Any, path: Path) -> str:
    """A TOML value as the variable's text: lists are ``os.pathsep``-joined paths, tables JSON."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return os.pathsep.join(value)
    if isinstance(value, dict):  # a setting the environment gives as JSON
        return json.dumps(value, default=str)
    raise ConfigError(
        f"bad setting {key} = {value!r} in {path}: give a string, a number, a list of paths, "
        "or a table"
    )


def _read(path: Path, known: set[str]) -> dict[str, _FileValue]:
    """The config file's keys by variable name; none when there is no file.

    Raises:
        ConfigError: the file is not TOML, or holds a key that is not a setting.
    """
    try:
        table = loads_toml(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; fix the file or remove it") from None
    values: dict[str, _FileValue] = {}
    for key, value in table.items():
        name = PREFIX + key.upper()
        if name not in known:
            where = (
                "; Temporal's connection lives in the temporal CLI's profile file or TEMPORAL_* "
                "variables"
                if key.lower().startswith("temporal")
                else ""
            )
            raise ConfigError(
                f"unknown setting {key!r} in {path}: keys are the DURABENCH_* variables "
                f"without the prefix, in lower case (see docs/settings.md){where}"
            )
        values[name] = _FileValue(value, _as_text(key, value, path))
    return values


class ConfigFileSource(EnvSettingsSource):
    """``$DURABENCH_HOME/config.toml``, read like the environment: same names, same parsing."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        self.path = path
        known = {env_name(settings_cls, field) for field in settings_cls.model_fields}
        self.values = _read(path, known)
        super().__init__(settings_cls, case_sensitive=False, env_ignore_empty=True)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {name.lower(): value.text for name, value in self.values.items()}


def _shown(value: str) -> str:
    """``value`` with the credentials of a URL (``scheme://user:key@host``) left out."""
    return re.sub(r"(://)[^/@]*@", r"\1***@", value)


def _where(name: str, config: ConfigFileSource) -> str:
    """Which source gave ``name`` its value, as the user wrote it."""
    if os.environ.get(name):
        return f"{name}={_shown(os.environ[name])!r} in the environment"
    in_dotenv = dotenv_value(name)
    if in_dotenv is not None:
        return f"{name}={_shown(in_dotenv)!r} in {Path(ENV_FILE).resolve()}"
    if name in config.values:
        key = name.removeprefix(PREFIX).lower()
        written = config.values[name].written
        shown = _shown(written) if isinstance(written, str) else written
        return f"{key} = {shown!r} in {config.path}"
    return name


def bad_settings(
    settings_cls: type[BaseSettings], exc: ValidationError, config: ConfigFileSource
) -> ConfigError:
    """One line that names each bad setting, where it was set, and what is wrong with it."""
    by_key = {env_name(settings_cls, n): n for n in settings_cls.model_fields}
    parts = []
    for error in exc.errors():
        if error["type"] == "default_factory_not_called":  # a default from a bad setting
            continue
        key = str(error["loc"][0]) if error["loc"] else ""
        field = by_key.get(key, key)
        name = env_name(settings_cls, field) if field in settings_cls.model_fields else key
        why = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{_where(name, config)}: {why}")
    return ConfigError(f"bad setting {'; '.join(parts)}; correct it or remove it")
