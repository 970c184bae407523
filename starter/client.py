"""Connecting to Temporal: the embedded server or ``TEMPORAL_ADDRESS``, same converter."""

from __future__ import annotations

import asyncio
import os

from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.api.workflowservice.v1 import GetClusterInfoRequest
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError, TLSConfig

from durabench.errors import ConfigError
from durabench.settings import Settings
from starter.embedded import ensure_server
from workflows.search_attributes import SEARCH_ATTRIBUTES, index_type

__all__ = [
    "connect",
    "connect_when_ready",
    "deployment_of",
    "ensure_search_attributes",
    "tls_config",
]

API_KEY_ENV = "TEMPORAL_API_KEY"
"""Read when connecting and handed to the client only; never stored or logged."""


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


def tls_config(s: Settings) -> TLSConfig | bool:
    """TLS from ``TEMPORAL_TLS_CA/CERT/KEY`` (files); plain TLS for an API key; else none.

    Raises:
        ConfigError: a named file cannot be read, or only one of cert and key is set.
    """
    if bool(s.tls_cert) != bool(s.tls_key):
        raise ConfigError("set both TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY for mTLS, or neither")
    if not (s.tls_ca or s.tls_cert):
        return bool(os.environ.get(API_KEY_ENV))
    try:
        ca, cert, key = (p.read_bytes() if p else None for p in (s.tls_ca, s.tls_cert, s.tls_key))
    except OSError as exc:
        raise ConfigError(f"cannot read a TEMPORAL_TLS_* file: {exc}") from exc
    return TLSConfig(server_root_ca_cert=ca, client_cert=cert, client_private_key=key)


async def connect_when_ready(
    address: str,
    namespace: str,
    timeout_s: float = 60.0,
    tls: TLSConfig | bool = False,
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
                api_key=os.environ.get(API_KEY_ENV) or None,
            )
            await ensure_search_attributes(client)
            return client
        except (RuntimeError, RPCError) as exc:
            if not _starting(exc) or asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.5)


async def connect(settings: Settings | None = None) -> Client:
    """A client for durabench's Temporal, starting the embedded server if needed.

    Raises:
        ConfigError: the server cannot be reached or started.
    """
    settings = settings or Settings.from_env()
    address = await ensure_server(settings)
    try:
        return await connect_when_ready(address, settings.namespace, tls=tls_config(settings))
    except (RuntimeError, RPCError) as exc:
        fix = (
            "fix TEMPORAL_ADDRESS, or unset it to use the embedded server"
            if settings.temporal_address
            else f"something that is not a Temporal server holds port {settings.port}: stop it, "
            "or set DURABENCH_PORT to another port"
        )
        raise ConfigError(
            f"cannot use Temporal at {address} (namespace {settings.namespace}): {exc}; {fix}"
        ) from exc
