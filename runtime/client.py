"""Connecting to Temporal: the embedded server, or the one :mod:`runtime.temporal_profile` names."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.api.workflowservice.v1 import GetClusterInfoRequest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import LogForwardingConfig, LoggingConfig, Runtime, TelemetryConfig
from temporalio.service import RPCError, TLSConfig

from durabench.errors import ConfigError
from durabench.settings.values import Settings
from runtime.embedded import ensure_server, port_open
from runtime.temporal_profile import connect_options, load_settings
from workflows.search_attributes import SEARCH_ATTRIBUTES, index_type

__all__ = [
    "connect",
    "connect_when_ready",
    "deployment_of",
    "ensure_search_attributes",
    "forward_core_logs",
]


async def ensure_search_attributes(client: Client) -> None:
    """Register durabench's search attributes where they are missing (idempotent)."""
    ops = client.operator_service
    listed = await ops.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace)
    )
    missing = {
        key.name: index_type(key)
        for key in SEARCH_ATTRIBUTES
        if key.name not in listed.custom_attributes
    }
    if missing:
        await ops.add_search_attributes(
            AddSearchAttributesRequest(namespace=client.namespace, search_attributes=missing)
        )


async def deployment_of(client: Client) -> str:
    """``<namespace>@<cluster id>``: the Temporal deployment ``client`` talks to.

    Containers are labelled with it, so a sweep removes only its own deployment's: to
    another user's server on the same Docker host, this one's workflows do not exist.
    """
    info = await client.workflow_service.get_cluster_info(GetClusterInfoRequest())
    return f"{client.namespace}@{info.cluster_id}"


def _starting(exc: BaseException) -> bool:
    """Whether a failed connect means the server is up but still starting (not a stranger)."""
    text = str(exc)
    return "not healthy" in text or "Unavailable" in text


async def connect_when_ready(
    address: str,
    namespace: str,
    timeout_s: float = 60.0,
    tls: TLSConfig | bool = False,
    api_key: str | None = None,
    rpc_metadata: Mapping[str, str] | None = None,
) -> Client:
    """Connect and register search attributes, waiting while the server finishes starting.

    A dev server accepts connections a moment before its frontend is healthy; on a loaded
    machine that moment grows to seconds, and connecting in it fails with "not healthy".

    Raises:
        RuntimeError, RPCError: the connection failed for another reason, or the server was
            still starting after ``timeout_s``.
    """
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        try:
            client = await Client.connect(
                address,
                namespace=namespace,
                data_converter=pydantic_data_converter,
                tls=tls,
                api_key=api_key,
                rpc_metadata=rpc_metadata or {},
            )
            await ensure_search_attributes(client)
            return client
        except (RuntimeError, RPCError) as exc:
            if not _starting(exc) or asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.5)


def forward_core_logs() -> None:
    """Send the SDK core's log lines (Rust) to Python's logging, to be rendered like ours.

    Without it the core writes its warnings to stderr in a shape of its own, so JSON logs
    would not be JSON throughout. Only a process's first runtime can be chosen: where one
    exists already (a test session, a host program), it is kept.
    """
    try:
        Runtime.prevent_default()  # type: ignore[no-untyped-call]  # refused once one exists
    except RuntimeError:
        return
    forwarding = LogForwardingConfig(logger=logging.getLogger("temporalio.core"))
    logs = LoggingConfig(filter=LoggingConfig.default.filter, forwarding=forwarding)
    Runtime.set_default(Runtime(telemetry=TelemetryConfig(logging=logs)))


async def connect(settings: Settings | None = None, *, start: bool = True) -> Client:
    """A client for durabench's Temporal, starting the embedded server if needed.

    ``start=False``: a command that only reads (``status``) starts no server; with none
    running it is refused with how to start one.

    Raises:
        ConfigError: the server cannot be reached or started (or, without ``start``, none
            is running).
    """
    settings = settings or load_settings()
    options = connect_options(settings)
    forward_core_logs()
    if not start and not settings.temporal_address:
        if not await port_open("127.0.0.1", settings.port):
            raise ConfigError(
                f"no Temporal server is running for {settings.home} (nothing answers on "
                f"localhost:{settings.port}), so there is no run to show: start one with "
                "`python -m starter server` (or any `python -m starter run`)"
            )
    address = await ensure_server(settings)
    try:
        return await connect_when_ready(
            address,
            settings.namespace,
            tls=options.tls,
            api_key=options.api_key,
            rpc_metadata=options.rpc_metadata,
        )
    except (RuntimeError, RPCError) as exc:
        fix = (
            "fix TEMPORAL_ADDRESS or the temporal CLI's profile, or unset the address to use "
            "the embedded server"
            if settings.temporal_address
            else f"something that is not a Temporal server holds port {settings.port}: stop it, "
            "or set DURABENCH_PORT to another port"
        )
        raise ConfigError(
            f"cannot use Temporal at {address} (namespace {settings.namespace}): {exc}; {fix}"
        ) from exc
