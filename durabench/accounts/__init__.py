"""Agent accounts: the accounts file, secrets by account id, the pool's rules, cooldowns."""

from durabench.accounts.cooldown import account_cooldown
from durabench.accounts.file import (
    account_env,
    account_secrets,
    find_account,
    load_accounts,
    pool_accounts,
    secret_of,
)
from durabench.accounts.pool import TOKEN_LOW, Pool
from durabench.accounts.room import room_line

__all__ = [
    "TOKEN_LOW",
    "Pool",
    "account_cooldown",
    "account_env",
    "account_secrets",
    "find_account",
    "load_accounts",
    "pool_accounts",
    "room_line",
    "secret_of",
]
