"""Whether the agent's own MCP report matches its lane: the MCP lane measured with MCP.

A paired run compares the baseline lane with the MCP lane. When the MCP server fails to
start (a bad endpoint, a rejected token) the CLI carries on without it, and the MCP lane
silently measures the baseline again; when a baseline session shows an MCP server, the
baseline is not the agent alone.

The report is the CLI's, printed inside the sandbox, so it is the agent's word: the
classifier quotes it in the reason and never excludes an attempt for it. Only the
gateway's record of the MCP server's answers (``metered.metered_mcp``) does.
"""

from __future__ import annotations

from collections.abc import Sequence

from durabench.agents.transcript import McpServerState

__all__ = ["WORKING", "mcp_mismatch"]

WORKING = frozenset({"connected"})
"""Statuses of a server the agent could use. ``pending`` is not one: a server still
connecting when the session began may never have answered."""


def mcp_mismatch(
    configured: Sequence[str] | None, reported: Sequence[McpServerState] | None
) -> str | None:
    """Why the lane's MCP servers and the agent's report disagree, or ``None``.

    Args:
        configured: Servers the lane's config gives the agent (empty: the baseline lane);
            ``None`` when the lane is unknown, which is not checked.
        reported: Servers the CLI reported at session start; ``None`` when its transcript
            carries no report (nothing to check).
    """
    if configured is None or reported is None:
        return None
    shown = ", ".join(f"{s.name} ({s.status or 'no status'})" for s in reported) or "none"
    if not configured:
        if not reported:
            return None
        return (
            f"MCP ON BASELINE: the baseline lane's agent reported MCP server(s) {shown}; "
            "the baseline must run without MCP (check the task image and the agent's "
            "home for an MCP config)"
        )
    states = {s.name: s.status for s in reported}
    for name in configured:
        if name not in states:
            return (
                f"MCP NOT WORKING: the lane's MCP server {name} is absent from the agent's "
                f"MCP report (reported: {shown}), so the session ran without MCP"
            )
        if states[name] not in WORKING:
            return (
                f"MCP NOT WORKING: the lane's MCP server {name} reported status "
                f"{states[name]!r} when the session began, so the session ran without MCP; "
                "check the server's endpoint and token"
            )
    return None
