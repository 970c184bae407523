"""The real keys behind grants: read by name, from an environment and the accounts file.

The gateway's process reads them on each request (so a rotated key or a new account is
used at once); the worker reads the same to tell an agent which variable its placeholder
goes in. Neither keeps a key anywhere but in memory, for the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from durabench.accounts import find_account, load_accounts, secret_of
from durabench.accounts.file import agent_env as account_variable
from durabench.agents import get_agent
from durabench.errors import AccountError
from durabench.gateway.grants import Grant

__all__ = ["KeyRing"]


class KeyRing:
    """Where a grant's key and its MCP server's token are, on this host."""

    def __init__(self, accounts_file: Path, environ: Mapping[str, str]) -> None:
        self.accounts_file = accounts_file
        self.environ = environ

    def secret(self, grant: Grant) -> tuple[str, str]:
        """The real key as ``(variable, value)``: the leased account's, else the host's own.

        Raises:
            LookupError: this host has no key for the grant; the message says what to set.
        """
        if grant.account is not None:
            try:
                spec = find_account(
                    load_accounts(self.accounts_file), grant.account, self.accounts_file
                )
                return account_variable(spec), secret_of(spec, self.environ)
            except AccountError as exc:
                raise LookupError(str(exc)) from None
        agent = get_agent(grant.agent)
        for name in agent.secret_env:
            if self.environ.get(name):
                return name, self.environ[name]
        raise LookupError(
            f"this worker has no key for {grant.agent}: set one of {', '.join(agent.secret_env)}"
        )

    def mcp(self, grant: Grant) -> tuple[str, str]:
        """The lane's MCP endpoint and token as ``(url, token)``.

        Raises:
            LookupError: a variable is unset; the message names both.
        """
        server = grant.mcp
        if server is None:
            raise LookupError(f"the attempt {grant.attempt} has no MCP server over HTTP")
        url, token = self.environ.get(server.url_env), self.environ.get(server.token_env)
        if not url or not token:
            raise LookupError(
                f"this worker lacks {server.url_env} or {server.token_env} for MCP server "
                f"{server.name!r}"
            )
        return url, token

    def key_variable(self, grant: Grant) -> str | None:
        """The variable the agent reads its key from, as its real key would be given.

        ``None`` when this host has no key for it: the agent then gets no placeholder
        either, and fails to log in at once (``infra_auth``) rather than retrying a
        gateway that can only refuse it.
        """
        try:
            return self.secret(grant)[0]
        except LookupError:
            return None
