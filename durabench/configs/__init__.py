"""Lane configs (``baseline``, ``sourcegraph_full``, ...) and the MCP files they produce."""

from durabench.configs.cli_routes import CLI_ROUTES_FILE, cli_lacks, cli_route, load_cli_routes
from durabench.configs.eval_matrix import configs_from_eval_matrix
from durabench.configs.lane_configs import (
    CONFIGS_FILE,
    REGISTRY_ENV,
    all_configs,
    dockerfile_for,
    get_config,
    instruction_for,
    known_configs,
    load_registry,
    mcp_token_envs,
)
from durabench.configs.mcp import mcp_config_json, mcp_env, mcp_server_entry, missing_mcp_env

__all__ = [
    "CLI_ROUTES_FILE",
    "CONFIGS_FILE",
    "REGISTRY_ENV",
    "all_configs",
    "cli_lacks",
    "cli_route",
    "configs_from_eval_matrix",
    "dockerfile_for",
    "get_config",
    "instruction_for",
    "known_configs",
    "load_cli_routes",
    "load_registry",
    "mcp_config_json",
    "mcp_env",
    "mcp_server_entry",
    "mcp_token_envs",
    "missing_mcp_env",
]
