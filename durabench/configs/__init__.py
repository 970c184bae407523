"""Lane configs (``baseline``, ``sourcegraph_full``, ...) and the MCP files they produce."""

from durabench.configs.mcp import mcp_config_json, mcp_env, missing_mcp_env
from durabench.configs.registry import (
    CONFIGS_FILE,
    all_configs,
    dockerfile_for,
    get_config,
    instruction_for,
    known_configs,
)

__all__ = [
    "CONFIGS_FILE",
    "all_configs",
    "dockerfile_for",
    "get_config",
    "instruction_for",
    "known_configs",
    "mcp_config_json",
    "mcp_env",
    "missing_mcp_env",
]
