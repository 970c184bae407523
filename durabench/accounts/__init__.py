"""Agent accounts: the accounts file, secrets by account id, the pool's rules, cooldowns."""

from durabench.accounts.cooldown import cooldown_until, reset_time
from durabench.accounts.file import (
    account_env,
    account_secrets,
    find_account,
    load_accounts,
    pool_accounts,
    secret_of,
)
from durabench.accounts.pool import TOKEN_LOW, Pool

__all__ = [
    "TOKEN_LOW",
    "Pool",
    "account_env",
    "account_secrets",
    "cooldown_until",
    "find_account",
    "load_accounts",
    "pool_accounts",
    "reset_time",
    "secret_of",
]
