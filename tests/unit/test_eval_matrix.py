"""A config registry in CodeScaleBench's eval_matrix.json shape is read as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from durabench.configs import load_registry
from durabench.configs.lane_configs import REGISTRY_ENV, _registry, get_config
from durabench.errors import ConfigError, UnknownConfig


def test_the_shared_eval_matrix_loads_with_its_mcp_servers(shared_fixtures: Path) -> None:
    registry = load_registry(shared_fixtures / "eval_matrix.json")
    matrix = json.loads((shared_fixtures / "eval_matrix.json").read_text())
    assert set(matrix["supported_configs"]) <= set(registry)

    baseline, full = registry["baseline"], registry["sourcegraph_full"]
    assert (baseline.mcp, baseline.official, baseline.instruction_file) == (
        None,
        True,
        "instruction.md",
    )
    assert full.official and full.mcp is not None and full.mcp.name == "sourcegraph"
    assert full.dockerfile == "Dockerfile"  # the matrix names no variant for it

    sg_only = registry["sg_only_env"]
    assert sg_only.dockerfile == "Dockerfile.sg_only"
    assert sg_only.mcp == full.mcp and not sg_only.official
    assert registry["sourcegraph_scip"].description.startswith("SCIP precise indexing")
    assert "no server definition" in registry["github_full"].unavailable


def test_a_config_the_matrix_cannot_run_fails_with_the_reason(
    shared_fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REGISTRY_ENV, str(shared_fixtures / "eval_matrix.json"))
    _registry.cache_clear()
    try:
        assert get_config("sg_only_env").dockerfile == "Dockerfile.sg_only"
        with pytest.raises(UnknownConfig, match="'github_full' cannot run: its MCP setup"):
            get_config("github_full")
    finally:
        monkeypatch.delenv(REGISTRY_ENV)
        _registry.cache_clear()
    with pytest.raises(UnknownConfig, match="unknown config 'sg_only_env'"):
        get_config("sg_only_env")


def test_an_unreadable_registry_names_the_variable(tmp_path: Path) -> None:
    bad = tmp_path / "matrix.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="DURABENCH_CONFIG_REGISTRY"):
        load_registry(bad)
