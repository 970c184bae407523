"""The config registry: lane configs by name, read from ``configs.json``.

A config is data, not code: what MCP server a lane gets, which instruction file and
which Dockerfile variant it uses. Secrets appear only as environment variable names.

A team's own registry, named by ``DURABENCH_CONFIG_REGISTRY``, is laid over the built-in one:
either durabench's ``configs.json`` shape or CodeScaleBench's ``eval_matrix.json``, read as
it is (see :mod:`durabench.configs.eval_matrix`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel

from durabench.configs.eval_matrix import configs_from_eval_matrix, is_eval_matrix
from durabench.documents import loads_json
from durabench.errors import ConfigError, UnknownConfig
from durabench.ids import check_id
from durabench.models.config import LaneConfig
from durabench.models.task import TaskSpec
from durabench.settings.environment import REGISTRY_ENV, config_registry_file

__all__ = [
    "CONFIGS_FILE",
    "REGISTRY_ENV",
    "load_registry",
    "all_configs",
    "dockerfile_for",
    "get_config",
    "instruction_for",
    "known_configs",
]

CONFIGS_FILE = Path(__file__).resolve().parent / "configs.json"

"""Environment variable naming a team's registry file."""


class _Registry(BaseModel):
    configs: list[LaneConfig]


def load_registry(extra: Path | None = None) -> dict[str, LaneConfig]:
    """The built-in configs, with those of ``extra`` (either shape) laid over them.

    Raises:
        ConfigError: ``extra`` cannot be read, is in neither shape, or names a lane or an
            instruction file that is not an id (:mod:`durabench.ids`); the message says which.
    """
    builtin = _Registry.model_validate(loads_json(CONFIGS_FILE.read_text()))
    configs = {c.name: _checked(c, CONFIGS_FILE) for c in builtin.configs}
    if extra is None:
        return configs
    try:
        doc = loads_json(extra.read_text())
        if is_eval_matrix(doc):
            added = configs_from_eval_matrix(doc, configs)
        else:
            added = _Registry.model_validate(doc).configs
    except (OSError, ValueError) as exc:  # JSON and pydantic errors are ValueErrors
        raise ConfigError(
            f"config registry {extra} ({REGISTRY_ENV}) cannot be read: {exc}. It must be "
            "durabench's {\"configs\": [...]} or CodeScaleBench's eval_matrix.json"
        ) from exc
    return configs | {c.name: _checked(c, extra) for c in added}


def _checked(config: LaneConfig, source: Path) -> LaneConfig:
    """``config``, if its lane name and instruction file name nothing outside their place.

    The lane names a results directory and a container; the instruction file is read from
    the task directory and copied into the sandbox, so it must be a plain file name.
    """
    check_id(config.name, f"config registry {source}: lane name")
    check_id(
        config.instruction_file, f"config registry {source}: lane {config.name}'s instruction file"
    )
    return config


@cache
def _registry() -> dict[str, LaneConfig]:
    return load_registry(config_registry_file())


def all_configs() -> list[LaneConfig]:
    """Every config of the registry."""
    return list(_registry().values())


def mcp_token_envs() -> tuple[str, ...]:
    """The variables every config's MCP server reads its token from: secrets to scrub."""
    return tuple(sorted({c.mcp.token_env for c in _registry().values() if c.mcp is not None}))


def known_configs() -> list[str]:
    """Names of every config, sorted."""
    return sorted(_registry())


def get_config(name: str) -> LaneConfig:
    """The config called ``name``.

    Raises:
        UnknownConfig: no such config (the message lists the known ones), or it cannot run.
    """
    try:
        config = _registry()[name]
    except KeyError:
        known = ", ".join(known_configs())
        raise UnknownConfig(f"unknown config {name!r}; known configs: {known}") from None
    if config.unavailable:
        raise UnknownConfig(f"config {name!r} cannot run: {config.unavailable}")
    return config


def instruction_for(config: LaneConfig, task: TaskSpec) -> str:
    """The instruction file a lane gives the agent for ``task`` (falls back to instruction.md)."""
    if config.instruction_file == "instruction_mcp.md" and not task.has_mcp_instruction:
        return "instruction.md"
    return config.instruction_file


def dockerfile_for(config: LaneConfig, task: TaskSpec) -> str:
    """The Dockerfile variant a lane builds for ``task`` (falls back to Dockerfile)."""
    return config.dockerfile if config.dockerfile in task.dockerfiles else "Dockerfile"
