"""Which agent runs, on which model, with which options: one ``AgentSpec``, passed whole.

The run's request holds it, each pair's input and each attempt's ref carry the same
object, so an option added here reaches the attempt without being copied field by field
through three levels. Its ``model`` is an LLM model id (:mod:`durabench.agents.llm_ids`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentSpec", "flat_agent_fields"]


class AgentSpec(BaseModel):
    """An agent adapter (``--agent``), the model it is asked to use, and its options."""

    model_config = ConfigDict(frozen=True)

    name: str = "oracle"
    """The adapter's name in the agent registry."""
    model: str = "none"
    """The LLM model id the agent is asked to use (``none`` for agents without one)."""
    options: dict[str, str] = Field(default_factory=dict)
    """``--agent-opt KEY=VALUE`` pairs, such as the replay agent's ``plan`` or a CLI
    ``version`` pinned at plan time."""


def flat_agent_fields(data: Any) -> Any:
    """Fold the flat fields of files written before ``AgentSpec`` into one.

    Earlier runs' ``plan.json`` and ``run.json`` (read for counterparts and reruns) held
    ``agent``, ``model`` and ``agent_options`` side by side; they still read.
    """
    flat = ("agent", "model", "agent_options")
    if not isinstance(data, dict) or not any(key in data for key in flat):
        return data
    if isinstance(data.get("agent"), dict | AgentSpec):
        if "model" in data or "agent_options" in data:
            raise ValueError(
                "give the model and options inside agent (an AgentSpec), not beside it"
            )
        return data
    spec = {"name": data.get("agent"), "model": data.get("model")}
    spec = {key: value for key, value in spec.items() if value is not None}
    kept = {key: value for key, value in data.items() if key not in flat}
    return kept | {"agent": spec | {"options": data.get("agent_options") or {}}}
