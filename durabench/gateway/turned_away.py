"""Ledger lines for requests turned away before the app saw them: the host full, a bad head.

Neither request was admitted, but the attempt whose key each carries is told: a request
refused because the host's gateway was full is the host's failure (retried as infra);
one whose head was ambiguous or malformed is the agent's own (``malformed``).
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from durabench.gateway.grants import GrantStore
from durabench.gateway.head import parse_head
from durabench.gateway.ledger import MALFORMED, OVERLOADED, append_entry
from durabench.gateway.providers import client_key, mcp_key, route_of
from durabench.gateway.request import AgentRequest

__all__ = ["record_malformed", "record_overloaded"]

Scope = MutableMapping[str, Any]
log = logging.getLogger(__name__)


def record_overloaded(store: GrantStore, scope: Scope) -> None:
    """Record that a request was turned away because the host's gateway was full.

    Other attempts' requests filled it (one attempt holds at most its own share), so
    the attempt's ledger says so in the host's words: its failure is infra, retried.
    """
    raw = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
    provider, rest = route_of(raw)
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
    key = mcp_key(headers) if provider == "mcp" else client_key(headers, dict(query))
    grant = store.find(key)
    if grant is None:
        return
    ledger = Path(grant.ledger)
    if _last_line(ledger).find(f'"refused":"{OVERLOADED}"') >= 0:
        return  # one line for a run of refusals: a flood while full cannot grow it
    req = AgentRequest(grant.provider, rest, scope["method"], headers, [])
    append_entry(ledger, req.entry(503, refused=OVERLOADED))


def record_malformed(store: GrantStore, head: bytes, why: str) -> None:
    """Record a request whose head the gateway refused (:mod:`.head`), as its key says.

    Called by the HTTP protocol, which answered it 400 and closed its connection; a
    head whose key names no attempt is answered alike and recorded nowhere.
    """
    raw = parse_head(head)
    provider, rest = route_of(raw.target)
    headers = dict(raw.headers)
    query = dict(parse_qsl(raw.target.partition("?")[2]))
    key = mcp_key(headers) if provider == "mcp" else client_key(headers, query)
    grant = store.find(key)
    if grant is None:
        return
    req = AgentRequest(grant.provider, rest, raw.method[:16], headers, [], grant.ledger)
    req.record(400, refused=MALFORMED)
    log.warning("refused a malformed request of %s: %s", grant.attempt, why)


def _last_line(path: Path) -> str:
    """The ledger's last line ('' when there is none): a line is well under 4 KiB."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - 4096))
            lines = f.read().decode("utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return ""
    return lines[-1] if lines else ""
