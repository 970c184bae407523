"""Per-attempt placeholder keys, and what each one stands for.

An attempt's agent gets a key that is good only at this host's gateway, only while its
attempt runs. The key is derived from the attempt (an HMAC under a key kept in the
worker's home, 0600), so a worker that restarts, or another worker of this host, hands a
re-attached agent the same key and finds its grant. A grant names the attempt, its agent
and its account, never a secret: the gateway reads the real key from its own environment
(or the accounts file) on each request, as the agent's process once did.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from durabench.agents.llm_ids import served_model_matches
from durabench.atomic import atomic_write
from durabench.gateway.providers import TOKEN_PREFIX, ProviderName
from durabench.models.config import McpServer
from durabench.spend.terms import SpendTerms

__all__ = ["Grant", "GrantStore", "TOKEN_PREFIX"]


class Grant(BaseModel):
    """What a placeholder key stands for."""

    model_config = ConfigDict(frozen=True)

    attempt: str
    """The attempt's key (run, task, lane, attempt)."""
    agent: str
    """The agent's registry name: which variables its real key may be in."""
    provider: ProviderName
    """The model API the key is good for."""
    model: str
    """The model the attempt was asked to use: the only one its requests may name."""
    auxiliary_models: tuple[str, ...] = ()
    """Other models its CLI calls on its own for side work (Claude Code's small model for
    titles and summaries), which the gateway serves too."""
    account: str | None = None
    """The leased account, whose secret is sent; ``None``: the worker's own key."""
    ledger: str
    """The attempt's ledger file (the gateway's record of its requests), on the host."""
    budget_tokens: int | None = None
    """Tokens (input, output and cache) the attempt may use; ``None``: no budget."""
    spend: SpendTerms | None = None
    """The run's spend cap holds its requests (:mod:`.spend_gate`); ``None``: no cap."""
    mcp: McpServer | None = None
    """The lane's MCP server over HTTP, reached through the gateway; ``None``: none."""
    lease_sec: float | None = None
    """How long the grant holds unless its worker renews it (``GrantStore.renew``, while
    the agent phase runs): a worker that dies on a live host leaves its sessions running
    and its gateway serving, and once its attempts start over elsewhere those sessions
    must not pay. ``None``: no lease (held until revoked)."""

    def serves(self, model: str) -> bool:
        """Whether a request naming ``model`` may go out.

        It may when ``model`` is the requested model, an auxiliary one, or a dated
        snapshot of either.
        """
        return any(served_model_matches(m, model) for m in (self.model, *self.auxiliary_models))


class GrantStore:
    """Grants as files under ``root``: one per live attempt, named by its key's hash."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _signing_key(self) -> bytes:
        """The host's signing key, made by the first worker that needs it.

        Written whole under another name and linked into place (which fails if another
        worker's key got there first): no worker ever reads it half written, so every
        worker of the host derives the same placeholder for an attempt.
        """
        path = self.root / "signing.key"
        if not path.exists():
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
            made = self.root / f".signing.key.{os.getpid()}.{secrets.token_hex(8)}"
            fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(32))
            try:
                os.link(made, path)
            except FileExistsError:
                pass  # another worker's key is the host's
            finally:
                made.unlink(missing_ok=True)
        return path.read_bytes()

    def token_for(self, attempt: str) -> str:
        """The attempt's placeholder key: the same for every worker of this host."""
        mac = hmac.new(self._signing_key(), attempt.encode(), hashlib.sha256).hexdigest()
        return f"{TOKEN_PREFIX}{mac[:48]}"

    def _file(self, token: str) -> Path:
        return self.root / "grants" / f"{hashlib.sha256(token.encode()).hexdigest()[:32]}.json"

    def grant(self, grant: Grant) -> str:
        """Make the attempt's key good at the gateway; returns the key."""
        token = self.token_for(grant.attempt)
        path = self._file(token)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, grant.model_dump_json())
        return token

    def find(self, token: str) -> Grant | None:
        """The grant behind ``token``, or ``None`` for an unknown or revoked key."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 128:
            return None
        return _held(self._file(token))

    def renew(self, attempt: str) -> None:
        """The attempt's agent phase still runs here: its grant's lease starts again."""
        with contextlib.suppress(FileNotFoundError):  # revoked meanwhile: stays revoked
            os.utime(self._file(self.token_for(attempt)))

    def holds(self, token: str) -> bool:
        """Whether ``token``'s grant is still there (one look at the file, no parse)."""
        return token.startswith(TOKEN_PREFIX) and len(token) <= 128 and self._file(token).exists()

    def live(self) -> list[Grant]:
        """Every grant neither revoked nor lapsed: the attempts whose agents may be running.

        A lapsed grant's file stays until a sweep, but its key is refused (:meth:`find`):
        its attempt spends nothing here any more, so it holds no block or rate share.
        """
        held = (_held(path) for path in sorted((self.root / "grants").glob("*.json")))
        return [grant for grant in held if grant is not None]

    def revoke(self, attempt: str) -> None:
        """The attempt's key is good no more (its agent has ended)."""
        self._file(self.token_for(attempt)).unlink(missing_ok=True)


def _held(path: Path) -> Grant | None:
    """The grant in ``path``, unless it is gone or its lease lapsed."""
    try:
        grant = Grant.model_validate_json(path.read_text())
        renewed = path.stat().st_mtime
    except (OSError, ValueError):
        return None
    if grant.lease_sec is not None and time.time() - renewed > grant.lease_sec:
        return None  # its worker is gone, and its attempt with it: the session pays no more
    return grant
