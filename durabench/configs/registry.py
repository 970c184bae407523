"""The config registry: lane configs by name, read from ``configs.json``.

A config is data, not code: what MCP server a lane gets, which instruction file and
which Dockerfile variant it uses. Secrets appear only as environment variable names.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from pydantic import BaseModel

from durabench.errors import UnknownConfig
from durabench.models.config import LaneConfig
from durabench.models.task import TaskSpec

__all__ = [
    "CONFIGS_FILE",
    "all_configs",
    "dockerfile_for",
    "get_config",
    "instruction_for",
    "known_configs",
]

CONFIGS_FILE = Path(__file__).resolve().parent / "configs.json"


class _Registry(BaseModel):
    configs: list[LaneConfig]


@cache
def _registry() -> dict[str, LaneConfig]:
    registry = _Registry.model_validate(json.loads(CONFIGS_FILE.read_text()))
    return {c.name: c for c in registry.configs}


def all_configs() -> list[LaneConfig]:
    """Every config of the registry."""
    return list(_registry().values())


def known_configs() -> list[str]:
    """Names of every config, sorted."""
    return sorted(_registry())


def get_config(name: str) -> LaneConfig:
    """The config called ``name``.

    Raises:
        UnknownConfig: no such config; the message lists the known ones.
    """
    try:
        return _registry()[name]
    except KeyError:
        known = ", ".join(known_configs())
        raise UnknownConfig(f"unknown config {name!r}; known configs: {known}") from None


def instruction_for(config: LaneConfig, task: TaskSpec) -> str:
    """The instruction file a lane gives the agent for ``task`` (falls back to instruction.md)."""
    if config.instruction_file == "instruction_mcp.md" and not task.has_mcp_instruction:
        return "instruction.md"
    return config.instruction_file


def dockerfile_for(config: LaneConfig, task: TaskSpec) -> str:
    """The Dockerfile variant a lane builds for ``task`` (falls back to Dockerfile)."""
    return config.dockerfile if config.dockerfile in task.dockerfiles else "Dockerfile"
