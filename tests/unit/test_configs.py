import json

import pytest

from durabench.configs import (
    dockerfile_for,
    get_config,
    instruction_for,
    known_configs,
    mcp_config_json,
    mcp_env,
    missing_mcp_env,
)
from durabench.errors import UnknownConfig
from durabench.tasks import load_suite


def test_baseline_has_no_mcp_and_full_has_one() -> None:
    assert get_config("baseline").mcp is None
    assert get_config("sourcegraph_full").mcp is not None
    assert {"baseline", "sourcegraph_full"} <= set(known_configs())


def test_unknown_config_lists_known() -> None:
    with pytest.raises(UnknownConfig, match="sourcegraph_full"):
        get_config("github_full_typo")


def test_lane_files_fall_back_when_task_lacks_variant() -> None:
    tasks = {t.task_id: t for t in load_suite("pytorch")}
    full = get_config("sourcegraph_full")
    assert dockerfile_for(full, tasks["tensor-broadcast-001"]) == "Dockerfile.sg_only"
    assert dockerfile_for(full, tasks["tensor-gelu-001"]) == "Dockerfile"
    assert instruction_for(full, tasks["tensor-gelu-001"]) == "instruction_mcp.md"
    base = get_config("baseline")
    assert instruction_for(base, tasks["tensor-gelu-001"]) == "instruction.md"


def test_mcp_config_names_secrets_without_values() -> None:
    server = get_config("sourcegraph_full").mcp
    assert server is not None
    env = {"SOURCEGRAPH_URL": "https://sg.example", "SOURCEGRAPH_ACCESS_TOKEN": "sgp_secret"}
    text = mcp_config_json(server)
    assert "sgp_secret" not in text and "sg.example" not in text
    entry = json.loads(text)["mcpServers"]["sourcegraph"]
    assert entry["url"] == "${SOURCEGRAPH_URL}/.api/mcp/v1"
    assert entry["headers"]["Authorization"] == "token ${SOURCEGRAPH_ACCESS_TOKEN}"
    assert mcp_env(server, env) == env
    assert missing_mcp_env(server, {"SOURCEGRAPH_URL": "x"}) == ("SOURCEGRAPH_ACCESS_TOKEN",)
