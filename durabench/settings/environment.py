"""The ``DURABENCH_*`` variables read apart from :class:`~durabench.settings.values.Settings`.

Each is read where loading every setting would be wrong: the log level before anything
can log a setting's error, the install's lock file (a fact of the install, not a
setting), the team's config registry and the unknown-model permission by
domain code that takes no settings object, and the gateway's spec once, by the child it
was handed to. They are read here so every ``DURABENCH_*`` name is read in one package
(a test holds it) and documented on the settings page.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "ALLOW_UNKNOWN_MODEL_ENV",
    "GATEWAY_SPEC_ENV",
    "LOCK_FILE_ENV",
    "LOG_LEVEL_ENV",
    "REGISTRY_ENV",
    "allow_unknown_models",
    "config_registry_file",
    "lock_file_named",
    "log_level",
    "pass_to_workers",
    "take_gateway_spec",
    "unknown_models_allowed",
]

LOG_LEVEL_ENV = "DURABENCH_LOG_LEVEL"
REGISTRY_ENV = "DURABENCH_CONFIG_REGISTRY"
ALLOW_UNKNOWN_MODEL_ENV = "DURABENCH_ALLOW_UNKNOWN_MODEL"
GATEWAY_SPEC_ENV = "DURABENCH_GATEWAY_SPEC"
LOCK_FILE_ENV = "DURABENCH_LOCK_FILE"


def log_level(default: str) -> str:
    """The log level's name, upper case: ``DURABENCH_LOG_LEVEL``, else ``default``."""
    return (os.environ.get(LOG_LEVEL_ENV) or default).upper()


def config_registry_file() -> Path | None:
    """The team's config registry (``DURABENCH_CONFIG_REGISTRY``), if one is named."""
    named = os.environ.get(REGISTRY_ENV)
    return Path(named).expanduser() if named else None


def lock_file_named() -> Path | None:
    """The lock this install's packages came from (``DURABENCH_LOCK_FILE``), or ``None``.

    The worker image names it; a checkout has it beside the packages.
    """
    named = os.environ.get(LOCK_FILE_ENV)
    return Path(named) if named else None


def unknown_models_allowed() -> bool:
    """Whether a model id no list knows is taken as it is (``DURABENCH_ALLOW_UNKNOWN_MODEL``)."""
    return os.environ.get(ALLOW_UNKNOWN_MODEL_ENV) == "true"


def allow_unknown_models() -> None:
    """Take unknown model ids in this process and the workers it starts (the CLI's flag)."""
    pass_to_workers(ALLOW_UNKNOWN_MODEL_ENV, "true")


def pass_to_workers(variable: str, value: str) -> None:
    """Set a ``DURABENCH_*`` setting for this process and the workers it starts.

    A CLI flag that stands for a setting (``--sandbox``) is read by the in-process worker
    and by any worker process it starts as that setting, as if the user had set it.
    """
    if not variable.startswith("DURABENCH_"):
        raise ValueError(f"{variable} is not a durabench setting")
    os.environ[variable] = value


def take_gateway_spec() -> str:
    """The gateway process's spec, removed from its environment so nothing it starts sees it.

    Raises:
        KeyError: the process was not started by a worker's gateway supervisor.
    """
    return os.environ.pop(GATEWAY_SPEC_ENV)
