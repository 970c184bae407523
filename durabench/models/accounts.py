"""Agent accounts: the accounts file, and the pool's leases, cooldowns and health.

An account is named by id everywhere: its secret stays where the file says it is (an
environment variable or a file on the worker) and is read by the activity that starts the
agent. Nothing here ever holds a secret value.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from durabench.models.room import STATING_APIS, RoomReading, RoomState

__all__ = [
    "STATING_APIS",
    "AccountHealth",
    "AccountSpec",
    "AccountState",
    "AccountsFile",
    "Cooldown",
    "Lease",
    "LeaseGrant",
    "LeaseRequest",
    "PoolAccount",
    "PoolAccounts",
    "PoolState",
    "ReleaseRequest",
    "VanishedInput",
]

_VARIABLE = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""A variable name: a token pasted in its place fails here, before it is shown anywhere."""

AccountState = Literal["ready", "busy", "token-low", "blocked", "cooling"]
"""Health of an account: ``ready`` and ``token-low`` take new leases."""


class AccountSpec(BaseModel):
    """One ``[[account]]`` of ``accounts.toml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    """Account id: letters, digits, ``.``, ``_``, ``-``; what results and logs name."""
    agent: str
    """Agent adapter the account is for (``claude-code``, ``codex-cli``, ...)."""
    secret_env: str | None = Field(default=None, pattern=_VARIABLE)
    """Environment variable of the worker that holds the secret (its name, not a value)."""
    secret_file: Path | None = None
    """File on the worker that holds the secret (``~`` expands); one of the two is set."""
    env: str | None = Field(default=None, pattern=_VARIABLE)
    """Variable the agent reads the secret from (default: the agent's first key variable,
    e.g. ``ANTHROPIC_API_KEY``; ``CLAUDE_CODE_OAUTH_TOKEN`` for a subscription token)."""
    slots: int = Field(default=4, ge=1)
    """Sessions the account may run at once."""
    token_expires_at: AwareDatetime | None = None
    """When the token expires, if it does (``2026-12-01T00:00:00Z``)."""

    @model_validator(mode="after")
    def _one_secret_source(self) -> AccountSpec:
        if (self.secret_env is None) == (self.secret_file is None):
            raise ValueError(
                f"account {self.id!r}: set exactly one of secret_env (a variable name) "
                "or secret_file (a path); the secret value itself never goes in this file"
            )
        return self


class AccountsFile(BaseModel):
    """``accounts.toml``: ``[[account]]`` tables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    account: tuple[AccountSpec, ...] = ()

    @model_validator(mode="after")
    def _unique_ids(self) -> AccountsFile:
        ids = [a.id for a in self.account]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"account ids must be unique; listed twice: {', '.join(twice)}")
        return self


class PoolAccount(BaseModel):
    """What the pool knows of an account: no secret, not even where it lives."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Account id."""
    agent: str
    """Agent adapter it is for."""
    slots: int
    """Sessions it may run at once."""
    token_expires_at: datetime | None = None
    """When its token expires."""
    blocked: str = ""
    """Why it cannot be used (its secret is missing where it was synced), or empty."""


class PoolAccounts(BaseModel):
    """Input of the pool's ``set_accounts`` update: the accounts file, as synced."""

    model_config = ConfigDict(frozen=True)

    accounts: tuple[PoolAccount, ...]
    """Every account; ones no longer listed take no new leases."""
    checked: bool = True
    """Whether the secrets were checked (a worker's sync); an unchecked sync (a CLI's,
    away from the secrets) keeps what the pool knew of known accounts' secrets."""


class Lease(BaseModel):
    """One slot of one account, held by one attempt."""

    model_config = ConfigDict(frozen=True)

    lease_id: str
    """Id the holder releases it by."""
    account_id: str
    holder_workflow_id: str
    """Workflow that holds it; when that workflow run is no longer running, it expires."""
    holder_run_id: str
    """Run id of the holder workflow."""
    label: str
    """What the slot is used for (task, lane, attempt), for ``accounts status``."""
    granted_at: datetime
    """When it was granted."""
    model: str = ""
    """The model the attempt calls (``""``: none), whose room on the account it took."""


class Cooldown(BaseModel):
    """An account that hit its usage cap, until the cap resets."""

    model_config = ConfigDict(frozen=True)

    account_id: str
    until: datetime
    """When it takes leases again."""
    cause: str = ""
    """What put it there (the attempt)."""


class LeaseRequest(BaseModel):
    """Input of the pool's ``lease`` update."""

    model_config = ConfigDict(frozen=True)

    agent: str
    """Agent adapter the attempt runs."""
    holder_workflow_id: str
    """The workflow asking (it releases the lease, or the pool reclaims it when it ends)."""
    holder_run_id: str
    """Its run id."""
    label: str
    """What for (task, lane, attempt)."""
    lease_id: str = ""
    """Id the lease gets, chosen by the holder: asking again with it (a retried activity
    whose answer was lost) returns the same lease instead of a second one."""
    model: str = ""
    """The model the attempt calls (``""``: none): a slot is leased only while the API
    says the account has room for it (:mod:`durabench.accounts.room`)."""
    paced: bool = False
    """The model's API states its room on every answer (:data:`STATING_APIS`): a new
    session waits for the API to answer the last one started on the account."""
    rooms: tuple[RoomReading, ...] = ()
    """What the asking host's gateway last read of its accounts' rate limits."""


class LeaseGrant(BaseModel):
    """Answer of the ``lease`` update: a lease, or why none and when to ask again."""

    model_config = ConfigDict(frozen=True)

    lease: Lease | None = None
    """The lease, when a slot was free."""
    wait_until: datetime | None = None
    """When an account comes out of cooldown, if every usable one is cooling."""
    busy: bool = False
    """Every slot is in use: one frees up when an attempt ends, so ask again soon."""
    why: str = ""
    """Why no lease was granted."""
    room: bool = False
    """No slot for want of room the API states: ask again soon, without backing off."""


class AwaitLeaseInput(BaseModel):
    """Input of ``await_lease``: ask the pool until a slot is free, from one activity."""

    model_config = ConfigDict(frozen=True)

    request: LeaseRequest
    """The lease asked for (its ``lease_id`` keeps every ask the same lease)."""
    poll_sec: float = Field(gt=0)
    """First wait between asks; it doubles up to ``max_poll_sec`` (jittered)."""
    max_poll_sec: float = Field(gt=0)
    """Longest wait between asks."""
    max_wait_sec: float = Field(gt=0)
    """Answer (still busy) after this long, so the workflow looks again now and then."""


class ReleaseRequest(BaseModel):
    """Input of the pool's ``release`` update."""

    model_config = ConfigDict(frozen=True)

    lease_id: str
    cool_until: datetime | None = None
    """When the attempt hit the account's usage cap: the time the cap resets."""
    cause: str = ""
    """What the attempt ended as, for the cooldown's record."""
    rooms: tuple[RoomReading, ...] = ()
    """What the releasing host's gateway last read of its accounts' rate limits."""


class PoolState(BaseModel):
    """The pool's whole state: its input, carried across continue-as-new."""

    model_config = ConfigDict(frozen=True)

    accounts: tuple[PoolAccount, ...] = ()
    """Accounts, as last synced."""
    leases: tuple[Lease, ...] = ()
    """Leases held."""
    cooldowns: tuple[Cooldown, ...] = ()
    """Accounts cooling after a usage cap."""
    rooms: tuple[RoomState, ...] = ()
    """What the API last said is left of each account's rate limits, by model."""
    room_settle_sec: float = Field(default=15.0, ge=0)
    """Below the high mark, how long a new session's weight is watched before the next
    starts on the same account and model (:mod:`durabench.accounts.room`)."""
    reap_every_sec: float = Field(default=300.0, gt=0)
    """How often leases are checked for holders that ended without releasing them."""
    max_history_events: int = Field(default=10_000, ge=100)
    """History length at which the pool continues as new."""
    max_updates: int = Field(default=1_000, ge=2, le=1_800)
    """Updates after which the pool continues as new: the server refuses more than 2,000
    in one workflow run, and those that arrive while the pool winds down must fit."""


class VanishedInput(BaseModel):
    """Input of ``vanished_holders``: the holders to look up."""

    model_config = ConfigDict(frozen=True)

    holders: tuple[tuple[str, str], ...]
    """``(workflow id, run id)`` of every lease holder."""


class AccountHealth(BaseModel):
    """One line of ``starter accounts status``."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Account id."""
    agent: str
    """Agent adapter."""
    state: AccountState
    """Its health."""
    leased: int
    """Slots in use."""
    slots: int
    """Slots it has."""
    until: datetime | None = None
    """End of a cooldown, or the token's expiry when it is low or expired."""
    detail: str = ""
    """Why it is blocked or cooling."""
