"""Agent adapters behind one small interface, registered by name."""

from durabench.agents.base import Agent, AgentContext, ExecInput, Upload
from durabench.agents.nop import NopAgent
from durabench.agents.oracle import OracleAgent
from durabench.agents.registry import agent, get_agent, known_agents
from durabench.agents.replay import ReplayAgent, ReplayCase, ReplayPlan
from durabench.agents.transcript import TranscriptFacts, read_events

__all__ = [
    "Agent",
    "AgentContext",
    "ExecInput",
    "NopAgent",
    "OracleAgent",
    "ReplayAgent",
    "ReplayCase",
    "ReplayPlan",
    "TranscriptFacts",
    "Upload",
    "agent",
    "get_agent",
    "known_agents",
    "read_events",
]
