"""The unprivileged ``agent`` user that agents run as.

Real CLIs always run as ``agent``; the oracle does with ``--agent-opt user=agent`` (a
solution run as an agent would be). The user is added on any image (no ``useradd``
needed), idempotently, and owns its home and the workspace, nothing else.
"""

from __future__ import annotations

import shlex

from durabench.agents.base import AgentContext, ExecInput

__all__ = ["AGENT_HOME", "AGENT_UID", "AGENT_USER", "add_agent_user"]

AGENT_USER = "agent"
AGENT_UID = 10001
AGENT_HOME = "/home/agent"

_ADD_USER = (
    f"id -u {AGENT_USER} >/dev/null 2>&1 || {{ "
    f"echo '{AGENT_USER}:x:{AGENT_UID}:{AGENT_UID}:durabench agent:{AGENT_HOME}:/bin/sh' "
    f">> /etc/passwd && echo '{AGENT_USER}:x:{AGENT_UID}:' >> /etc/group; }}"
)


def add_agent_user(ctx: AgentContext) -> ExecInput:
    """The root setup step: add ``agent``; give it its home and the workspace."""
    dirs = shlex.join([AGENT_HOME, str(ctx.paths.workspace)])
    own = f'chown -R "$(id -u {AGENT_USER}):$(id -g {AGENT_USER})" {dirs}'
    return ExecInput(command=f"{_ADD_USER}; mkdir -p {AGENT_HOME} && {own}", user="0")
