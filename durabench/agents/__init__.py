"""Agent adapters behind one small interface, registered by name."""

from durabench.agents.agent_registry import (
    agent,
    agent_class,
    agent_secret_env,
    get_agent,
    known_agents,
)
from durabench.agents.base import Agent, AgentContext, CliInstall, ExecInput, Upload
from durabench.agents.claude_code import ClaudeCodeAgent
from durabench.agents.cli import AGENT_HOME, AGENT_UID, AGENT_USER, CliAgent
from durabench.agents.cli_version import plain_version, transcript_version
from durabench.agents.codex_cli import CodexCliAgent
from durabench.agents.gemini_cli import GeminiCliAgent
from durabench.agents.nop import NopAgent
from durabench.agents.oracle import OracleAgent
from durabench.agents.replay import ReplayAgent, ReplayCase, ReplayPlan
from durabench.agents.transcript import (
    EventFile,
    McpServerState,
    TranscriptFacts,
    iter_events,
    lines_of,
    read_events,
)

__all__ = [
    "AGENT_HOME",
    "AGENT_UID",
    "AGENT_USER",
    "Agent",
    "AgentContext",
    "ClaudeCodeAgent",
    "CliAgent",
    "CliInstall",
    "CodexCliAgent",
    "EventFile",
    "ExecInput",
    "GeminiCliAgent",
    "McpServerState",
    "NopAgent",
    "OracleAgent",
    "ReplayAgent",
    "ReplayCase",
    "ReplayPlan",
    "TranscriptFacts",
    "Upload",
    "agent",
    "agent_class",
    "agent_secret_env",
    "get_agent",
    "iter_events",
    "known_agents",
    "lines_of",
    "plain_version",
    "read_events",
    "transcript_version",
]
