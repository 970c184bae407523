"""What an agent process is handed from the worker's environment, read at the last moment.

Keys and MCP tokens live on the worker (its environment, or the accounts file's secret
places) and reach the agent only through the ``docker exec`` that starts it; nothing here
is stored, logged or sent through Temporal.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from durabench.accounts import account_env, find_account, load_accounts
from durabench.agents import Agent, AgentContext
from durabench.configs import mcp_env

__all__ = ["agent_env"]


def agent_env(
    agent: Agent,
    ctx: AgentContext,
    *,
    account: str | None,
    accounts_file: Path,
    environ: Mapping[str, str],
) -> dict[str, str]:
    """The agent's variables: its settings, its key, and on an MCP lane the MCP secrets.

    The key is the leased ``account``'s secret, or with no account the worker's own.

    Raises:
        AccountError: the account, or its secret, is not on this worker.
    """
    names = (*agent.setting_env, *(() if account else agent.secret_env))
    env = {name: environ[name] for name in names if environ.get(name)}
    if account is not None:
        spec = find_account(load_accounts(accounts_file), account, accounts_file)
        env |= account_env(spec, environ)
    if ctx.mcp is not None and agent.uses_mcp:
        values = mcp_env(ctx.mcp, environ)
        env |= values | agent.derived_env(ctx, values)
    return env
