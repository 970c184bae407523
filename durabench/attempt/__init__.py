"""An attempt's lifecycle over the sandbox interface: what happens, in order, to one attempt.

Temporal-free: activities call these phases and add heartbeats and host admission.
"""

from durabench.attempt.environment import GatewayAccess, agent_env
from durabench.attempt.kept import AgentLogs
from durabench.attempt.lifecycle import Attempt, remove_sandbox
from durabench.attempt.limits import AttemptLimits
from durabench.attempt.reward import parse_reward
from durabench.attempt.setup import AttemptSetup
from durabench.attempt.workspace_cache import WorkspaceCache

__all__ = [
    "AgentLogs",
    "Attempt",
    "AttemptLimits",
    "AttemptSetup",
    "GatewayAccess",
    "WorkspaceCache",
    "agent_env",
    "parse_reward",
    "remove_sandbox",
]
