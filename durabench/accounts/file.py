"""``accounts.toml``: which agent accounts exist, and where each one's secret lives.

The file names a secret's place (a variable, a file), never its value, so it can be
shared and reviewed. Values are read here, on the machine that runs the agent, at the
moment it starts; the pool and every workflow only ever see account ids. ::

    [[account]]
    id = "team-a"
    agent = "claude-code"
    secret_env = "TEAM_A_OAUTH_TOKEN"     # or: secret_file = "~/.secrets/team-a"
    env = "CLAUDE_CODE_OAUTH_TOKEN"       # what the agent reads (default: its API key)
    slots = 4
    token_expires_at = 2026-12-01T00:00:00Z
"""

from __future__ import annotations

import os
import platform
import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from durabench.agents import get_agent
from durabench.documents import loads_toml
from durabench.errors import AccountError, ConfigError
from durabench.models.accounts import AccountsFile, AccountSpec, PoolAccount

__all__ = [
    "account_env",
    "account_secrets",
    "find_account",
    "load_accounts",
    "pool_accounts",
    "secret_of",
]

_MIN_SECRET = 6
"""A shorter value is no real secret: a placeholder or a typo."""


def load_accounts(path: Path) -> AccountsFile | None:
    """The accounts file at ``path``, or ``None`` when there is none.

    Raises:
        AccountError: the file is not valid TOML or not a valid accounts file; the
            message names the file and the field.
    """
    if not path.exists():
        return None
    try:
        data = loads_toml(path.read_text())
        accounts = AccountsFile.model_validate(data)
    except tomllib.TOMLDecodeError as exc:
        raise AccountError(f"{path} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise AccountError(
            f"{path}: {where}: {first['msg']} (see `python -m starter accounts --help`)"
        ) from None
    for spec in accounts.account:
        try:
            agent_env(spec)  # an unknown agent, or one that reads no key, fails here
        except AccountError as exc:
            raise AccountError(f"{path}: {exc}") from None
    return accounts


def find_account(accounts: AccountsFile | None, account_id: str, path: Path) -> AccountSpec:
    """The account ``account_id``.

    Raises:
        AccountError: the file is gone or no longer lists it.
    """
    for spec in accounts.account if accounts else ():
        if spec.id == account_id:
            return spec
    raise AccountError(
        f"account {account_id!r} is not in {path} on this worker; every worker needs the "
        "same accounts file (DURABENCH_ACCOUNTS_FILE)"
    )


def agent_env(spec: AccountSpec) -> str:
    """The variable the agent reads the account's secret from.

    Raises:
        AccountError: the agent is unknown, or reads no key and the account names no ``env``.
    """
    if spec.env:
        return spec.env
    try:
        names = get_agent(spec.agent).secret_env
    except ConfigError as exc:
        raise AccountError(f"account {spec.id!r}: {exc}") from None
    if not names:
        raise AccountError(
            f"account {spec.id!r}: agent {spec.agent!r} reads no key of its own; set `env` "
            "to the variable it should get the secret in"
        )
    return names[0]


def secret_of(spec: AccountSpec, environ: Mapping[str, str] | None = None) -> str:
    """The account's secret value, read now.

    Raises:
        AccountError: it is not set, not readable, or too short to be a secret.
    """
    environ = os.environ if environ is None else environ
    if spec.secret_env is not None:
        value, where = environ.get(spec.secret_env, ""), f"variable {spec.secret_env}"
    else:
        path = Path(str(spec.secret_file)).expanduser()
        where = "secret_file"  # not its path: a token pasted there must not be shown
        try:
            value = path.read_text().strip()
        except OSError as exc:
            raise AccountError(
                f"account {spec.id!r}: cannot read its {where}: {exc.strerror}"
            ) from None
    if len(value) < _MIN_SECRET:
        raise AccountError(
            f"account {spec.id!r}: its secret {where} is empty or shorter than "
            f"{_MIN_SECRET} characters; set it on every worker"
        )
    return value


def account_env(spec: AccountSpec, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The agent's environment for the account: its secret, under the agent's variable."""
    return {agent_env(spec): secret_of(spec, environ)}


def account_secrets(
    accounts: AccountsFile | None, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Every account secret readable here: scrubbed from everything kept."""
    values = []
    for spec in accounts.account if accounts else ():
        try:
            values.append(secret_of(spec, environ))
        except AccountError:
            continue
    return tuple(values)


def pool_accounts(
    accounts: AccountsFile, environ: Mapping[str, str] | None = None, check: bool = True
) -> tuple[PoolAccount, ...]:
    """The accounts as the pool keeps them: no secret, and why one is blocked here.

    ``check`` reads each secret; only a machine that runs agents can tell.
    """
    synced = []
    for spec in accounts.account:
        try:
            if check:
                secret_of(spec, environ)
            blocked = ""
        except AccountError:  # named by variable, never by path or value
            where = f"variable {spec.secret_env}" if spec.secret_env else "secret_file"
            blocked = f"its secret ({where}) is missing or too short on {platform.node()}"
        synced.append(
            PoolAccount(
                id=spec.id,
                agent=spec.agent,
                slots=spec.slots,
                token_expires_at=spec.token_expires_at,
                blocked=blocked,
            )
        )
    return tuple(synced)
