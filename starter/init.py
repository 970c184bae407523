"""``python -m starter init``: get a Temporal cluster ready for durabench, then exit.

A cluster's one-shot setup job (docker-compose.yml runs it before any worker): wait until
``TEMPORAL_ADDRESS`` answers, then register durabench's search attributes. Idempotent.
"""

from __future__ import annotations

import asyncio

import click
from temporalio.service import RPCError

from durabench.settings.values import Settings
from runtime.client import connect_when_ready
from runtime.temporal_profile import connect_options, load_settings
from starter.console import console
from starter.options import float_range, run_async
from starter.refusal import Refusal

__all__ = ["init", "init_main"]


async def init_main(settings: Settings, timeout_s: float) -> None:
    """Wait for the server (up to ``timeout_s``) and register the search attributes.

    Raises:
        click.ClickException: no server answered in time; the message says where it looked.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    options = connect_options(settings)
    while True:
        try:
            await connect_when_ready(
                settings.address,
                settings.namespace,
                tls=options.tls,
                api_key=options.api_key,
                rpc_metadata=options.rpc_metadata,
            )
            break
        except (RuntimeError, RPCError) as exc:
            if loop.time() > deadline:
                raise Refusal(
                    f"no Temporal server answered at {settings.address} (namespace "
                    f"{settings.namespace}) within {timeout_s:g} s: {exc}; check "
                    "TEMPORAL_ADDRESS and that the server is up"
                ) from None
            await asyncio.sleep(2)
    console.print(f"Temporal at {settings.address} is ready for durabench.")


@click.command()
@click.option(
    "--timeout",
    "timeout_s",
    type=float_range(min=0),
    default=300.0,
    show_default=True,
    help="Seconds to wait.",
)
def init(timeout_s: float) -> None:
    """Wait for TEMPORAL_ADDRESS and register durabench's search attributes (idempotent)."""
    run_async(init_main)(load_settings(), timeout_s)
