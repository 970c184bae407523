"""``python -m starter accounts status|sync``: the agent accounts and their health.

``status`` reads ``accounts.toml`` (``DURABENCH_ACCOUNTS_FILE``) and the pool's leases and
cooldowns, and shows each account ready / busy / token-low / blocked / cooling. ``sync``
gives the pool the file's accounts (``starter run`` does that too, when it plans).
"""

from __future__ import annotations

from datetime import UTC

import click
from rich.table import Table
from temporalio.client import Client

from activities.account_leases import PoolUnanswered, account_health, pool_snapshot, sync_pool
from durabench.accounts import load_accounts, pool_accounts, room_line
from durabench.errors import ConfigError
from durabench.models.accounts import AccountHealth, PoolState
from durabench.settings.values import Settings
from durabench.wording import counted
from runtime.client import connect
from runtime.temporal_profile import load_settings
from starter.console import console, shown
from starter.options import run_async

__all__ = ["accounts", "status_main", "sync_main"]

_STYLE = {
    "ready": "green",
    "busy": "yellow",
    "token-low": "yellow",
    "blocked": "red",
    "cooling": "cyan",
}


def _table(lines: tuple[AccountHealth, ...], state: PoolState) -> Table:
    table = Table(title="agent accounts")
    for col in ("account", "agent", "state", "slots in use", "until", "detail"):
        table.add_column(col)
    for h in lines:
        until = f"{h.until.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if h.until else ""
        style = _STYLE[h.state]
        table.add_row(
            h.id, h.agent, f"[{style}]{h.state}[/]", f"{h.leased}/{h.slots}", until, h.detail
        )
    for lease in state.leases:
        table.caption = (table.caption or "") + f"\n{lease.account_id}: {lease.label}"
    for room in state.rooms:
        table.caption = (table.caption or "") + f"\n{room_line(room)}"
    return table


async def status_main(
    client: Client | None = None, settings: Settings | None = None
) -> tuple[AccountHealth, ...]:
    """Show every account's health; return it."""
    settings = settings or load_settings()
    path = settings.accounts_file
    accounts = load_accounts(path)
    if accounts is None:
        console.print(
            f"No accounts file at {shown(str(path))}: agents get their keys from each worker's "
            "environment. See docs/accounts.md to list accounts."
        )
        return ()
    client = client or await connect(settings)
    pool = await pool_snapshot(client, settings)
    if pool is None:
        console.print(
            "[yellow]The account pool is not running or no worker answers: leases, "
            "cooldowns and the workers' view of the secrets are not shown.[/] "
            "`python -m starter accounts sync` starts it."
        )
        state = PoolState(accounts=pool_accounts(accounts))  # secrets as seen here
    else:
        state = pool
        if {a.id for a in pool.accounts} != {a.id for a in accounts.account}:
            console.print(
                f"[yellow]{shown(str(path))} lists other accounts than the pool has:[/] "
                "`python -m starter accounts sync` hands them over."
            )
    lines = account_health(state)
    console.print(_table(lines, state))
    return lines


async def sync_main(client: Client | None = None, settings: Settings | None = None) -> int:
    """Give the pool the accounts file's accounts; return how many."""
    settings = settings or load_settings()
    client = client or await connect(settings)
    try:  # secrets live on the workers: a run's plan syncs from one and checks them
        state = await sync_pool(client, settings, check_secrets=False)
    except PoolUnanswered as exc:
        raise ConfigError(str(exc)) from None
    if state is None:
        raise ConfigError(f"no accounts file at {settings.accounts_file}: nothing to sync")
    where = shown(str(settings.accounts_file))
    console.print(f"Synced {counted(len(state.accounts), 'account')} from {where}.")
    return len(state.accounts)


@click.group()
def accounts() -> None:
    """Agent accounts (accounts.toml): their health, and the pool that leases them."""


@accounts.command()
def status() -> None:
    """Show each account: ready, busy, token-low, blocked or cooling."""
    run_async(status_main)()


@accounts.command()
def sync() -> None:
    """Give the account pool the accounts file's accounts (starts it if needed)."""
    run_async(sync_main)()
