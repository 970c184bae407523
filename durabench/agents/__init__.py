"""Agent adapters behind one small interface, registered by name."""

from durabench.agents.base import Agent, AgentContext, ExecInput, Upload
from durabench.agents.nop import NopAgent
from durabench.agents.oracle import OracleAgent
from durabench.agents.registry import agent, get_agent, known_agents

__all__ = [
    "Agent",
    "AgentContext",
    "ExecInput",
    "NopAgent",
    "OracleAgent",
    "Upload",
    "agent",
    "get_agent",
    "known_agents",
]
