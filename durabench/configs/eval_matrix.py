"""Read a config registry in CodeScaleBench's ``eval_matrix.json`` shape, as it is.

The matrix says, per config, whether MCP is on (``mcp_enabled``), which MCP setup it shares
(``baseline_mcp_type``), its Dockerfile variant (``dockerfile_variant``) and whether it counts
in official numbers (``track_in_official``). It does not say how to reach the MCP server, so
that comes from durabench's own config of the same ``baseline_mcp_type`` (endpoint and token
named by environment variable). A config whose MCP setup durabench does not know stays in the
registry, marked unavailable with the reason, so naming it fails with that reason.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from durabench.models.config import LaneConfig

__all__ = ["EvalMatrix", "configs_from_eval_matrix", "is_eval_matrix"]


class _Definition(BaseModel):
    model_config = ConfigDict(extra="allow")

    mcp_enabled: bool = False
    baseline_mcp_type: str = "none"
    provider: str = "none"
    track_in_official: bool = False
    status: str = "active"
    dockerfile_variant: str | None = None
    notes: str = ""


class EvalMatrix(BaseModel):
    """The parts of ``eval_matrix.json`` durabench reads; the rest is kept, unused."""

    model_config = ConfigDict(extra="allow")

    official_default_configs: list[str] = []
    supported_configs: list[str] = []
    config_definitions: dict[str, _Definition]


def is_eval_matrix(doc: Any) -> bool:
    """Whether a parsed registry file has the eval-matrix shape."""
    return isinstance(doc, dict) and "config_definitions" in doc


def configs_from_eval_matrix(doc: Any, known: dict[str, LaneConfig]) -> list[LaneConfig]:
    """The matrix's configs as lane configs; MCP servers come from ``known`` configs."""
    matrix = EvalMatrix.model_validate(doc)
    configs = []
    for name, d in matrix.config_definitions.items():
        source = known.get(d.baseline_mcp_type)
        mcp = source.mcp if d.mcp_enabled and source is not None else None
        unavailable = ""
        if d.mcp_enabled and mcp is None:
            unavailable = (
                f"its MCP setup {d.baseline_mcp_type!r} has no server definition in durabench's "
                "configs.json; add one (endpoint and token by environment variable)"
            )
        configs.append(
            LaneConfig(
                name=name,
                description=d.notes or f"{d.provider} ({d.status})",
                official=d.track_in_official and name in matrix.official_default_configs,
                mcp=mcp,
                instruction_file="instruction_mcp.md" if d.mcp_enabled else "instruction.md",
                dockerfile=d.dockerfile_variant or "Dockerfile",
                unavailable=unavailable,
            )
        )
    return configs
