"""The account pool's rules, as plain Python: who gets a slot, when an account is healthy.

``AccountPoolWorkflow`` holds one :class:`Pool` and calls it from its update handlers with
``workflow.now()``; ``starter accounts status`` calls :meth:`Pool.health` on a snapshot
with the wall clock. Keeping the rules here lets a unit test walk through hours of
cooldowns without a server.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from durabench.accounts.room import decide, merged, started
from durabench.models.accounts import (
    AccountHealth,
    Cooldown,
    Lease,
    LeaseGrant,
    LeaseRequest,
    PoolAccount,
    PoolState,
    ReleaseRequest,
)
from durabench.models.room import RoomReading, RoomState
from durabench.wording import counted

__all__ = ["TOKEN_LOW", "Pool"]

TOKEN_LOW = timedelta(minutes=90)
"""A token expiring within this is ``token-low``: still used, but worth renewing."""


ROOM_KEPT = timedelta(hours=1)
"""What the API said of an account this long ago is forgotten (its limits are whole again)."""


def _last_news(room: RoomState) -> datetime:
    times = [t for t in (room.changed_at, room.latest.observed_at if room.latest else None) if t]
    return max(times) if times else datetime.min.replace(tzinfo=UTC)


class Pool:
    """Accounts, their leases and cooldowns; every method is deterministic given ``now``."""

    def __init__(self, state: PoolState) -> None:
        self.state = state

    @property
    def leases(self) -> tuple[Lease, ...]:
        """Leases held."""
        return self.state.leases

    def agents(self) -> set[str]:
        """Agent adapters some account is for."""
        return {a.agent for a in self.state.accounts}

    def set_accounts(self, accounts: Iterable[PoolAccount], checked: bool = True) -> None:
        """Replace the accounts; leases of dropped ones stay until released.

        Unless ``checked``, an account the pool knew keeps its ``blocked`` reason.
        """
        known = {a.id: a.blocked for a in self.state.accounts}
        kept = tuple(
            a if checked else a.model_copy(update={"blocked": known.get(a.id, a.blocked)})
            for a in accounts
        )
        self.state = self.state.model_copy(update={"accounts": kept})

    def health(self, now: datetime) -> tuple[AccountHealth, ...]:
        """Every account's health at ``now``."""
        return tuple(self._health(a, now) for a in self.state.accounts)

    def _health(self, account: PoolAccount, now: datetime) -> AccountHealth:
        leased = self._leased()[account.id]
        line = AccountHealth(
            id=account.id, agent=account.agent, state="ready", leased=leased, slots=account.slots
        )
        expires = account.token_expires_at
        if account.blocked:
            return line.model_copy(update={"state": "blocked", "detail": account.blocked})
        if expires is not None and expires <= now:
            return line.model_copy(
                update={"state": "blocked", "until": expires, "detail": "token expired"}
            )
        cooling = self._cooldown(account.id, now)
        if cooling is not None:
            update = {"state": "cooling", "until": cooling.until, "detail": cooling.cause}
            return line.model_copy(update=update)
        low = expires is not None and expires - now <= TOKEN_LOW
        if low:  # said whether it is busy or not: worth renewing either way
            line = line.model_copy(update={"until": expires, "detail": "token expires soon"})
        if leased >= account.slots:
            return line.model_copy(update={"state": "busy"})
        return line.model_copy(update={"state": "token-low"}) if low else line

    def grantable(self, agent: str, now: datetime) -> bool:
        """Whether an account of ``agent`` has a free slot at ``now``."""
        return any(h.agent == agent and h.state in ("ready", "token-low") for h in self.health(now))

    def grant(self, req: LeaseRequest, lease_id: str, now: datetime) -> LeaseGrant:
        """A lease on the account of ``req.agent`` with the most free slots, or why not.

        A lease of id ``lease_id`` that is held already is returned as it is. An
        attempt that calls a model gets a slot only on an account the API says has room
        for one more session of it (:mod:`durabench.accounts.room`).
        """
        self.take_rooms(req.rooms)
        held = next((x for x in self.state.leases if x.lease_id == lease_id), None)
        if held is not None:
            return LeaseGrant(lease=held)
        lines = [h for h in self.health(now) if h.agent == req.agent]
        usable = [h for h in lines if h.state in ("ready", "token-low")]
        full = {h.id: self._full(h.id, req.model, now, req.paced) for h in usable}
        roomy = [h for h in usable if full[h.id] is None]
        if roomy:
            best = max(roomy, key=lambda h: (h.slots - h.leased, h.id))
            lease = Lease(
                lease_id=lease_id,
                account_id=best.id,
                holder_workflow_id=req.holder_workflow_id,
                holder_run_id=req.holder_run_id,
                label=req.label,
                granted_at=now,
                model=req.model,
            )
            rooms = started(self.state.rooms, best.id, req.model, now) if req.model else None
            update = {"leases": (*self.state.leases, lease), "rooms": rooms or self.state.rooms}
            self.state = self.state.model_copy(update=update)
            return LeaseGrant(lease=lease)
        if usable:
            whys = "; ".join(str(full[h.id]) for h in usable)
            return LeaseGrant(busy=True, room=True, why=f"no room for a new session: {whys}")
        return self._refusal(req.agent, lines)

    def _full(self, account_id: str, model: str, now: datetime, paced: bool) -> str | None:
        """Why the API leaves no room on the account for a new session of ``model``.

        Asking may change how many the account and model are allowed (:func:`decide`).
        """
        if not model:
            return None
        rooms = {(r.account, r.model): r for r in self.state.rooms}
        state = rooms.get((account_id, model)) or RoomState(account=account_id, model=model)
        running = sum(
            1 for x in self.state.leases if (x.account_id, x.model) == (account_id, model)
        )
        settle = timedelta(seconds=self.state.room_settle_sec)
        state, shut = decide(state, running, now, settle, paced)
        rooms[(account_id, model)] = state
        self.state = self.state.model_copy(update={"rooms": tuple(rooms[k] for k in sorted(rooms))})
        return shut.why if shut is not None else None

    def take_rooms(self, readings: Iterable[RoomReading]) -> None:
        """Take in what a host's gateway read of its accounts' rate limits."""
        readings = tuple(readings)
        if readings:
            self.state = self.state.model_copy(update={"rooms": merged(self.state.rooms, readings)})

    def rooms(self) -> tuple[RoomState, ...]:
        """What the API last said of each account's rate limits, by model."""
        return self.state.rooms

    @staticmethod
    def _refusal(agent: str, lines: list[AccountHealth]) -> LeaseGrant:
        busy = [h for h in lines if h.state == "busy"]
        ends = [h.until for h in lines if h.state == "cooling" and h.until is not None]
        if busy:
            slots = sum(h.slots for h in busy)
            return LeaseGrant(
                busy=True, why=f"all {counted(slots, 'slot')} of {agent} accounts are in use"
            )
        if ends:
            back = min(ends)
            return LeaseGrant(
                wait_until=back,
                why=f"every {agent} account is cooling after a usage cap; the first is "
                f"back at {back:%Y-%m-%d %H:%M} UTC",
            )
        if not lines:
            return LeaseGrant(why=f"no account for {agent} is listed in accounts.toml")
        blocked = "; ".join(f"{h.id}: {h.detail}" for h in lines)
        return LeaseGrant(
            why=f"every {agent} account is blocked ({blocked}); fix accounts.toml or the "
            "secrets, then `python -m starter accounts sync`"
        )

    def release(self, req: ReleaseRequest, now: datetime) -> Lease | None:
        """End a lease (an unknown id is one already ended); cool its account if asked."""
        self.take_rooms(req.rooms)
        lease = next((x for x in self.state.leases if x.lease_id == req.lease_id), None)
        if lease is None:
            return None
        leases = tuple(x for x in self.state.leases if x.lease_id != req.lease_id)
        self.state = self.state.model_copy(update={"leases": leases})
        if req.cool_until is not None and req.cool_until > now:
            self.cool(Cooldown(account_id=lease.account_id, until=req.cool_until, cause=req.cause))
        return lease

    def cool(self, cooldown: Cooldown) -> None:
        """Put an account in cooldown (a later end of an existing one wins)."""
        current = next(
            (c for c in self.state.cooldowns if c.account_id == cooldown.account_id), None
        )
        if current is not None and current.until >= cooldown.until:
            return
        others = tuple(c for c in self.state.cooldowns if c.account_id != cooldown.account_id)
        self.state = self.state.model_copy(update={"cooldowns": (*others, cooldown)})

    def expire(self, vanished: Iterable[tuple[str, str]]) -> tuple[Lease, ...]:
        """Reclaim the leases of holders that ended without releasing them."""
        gone = set(vanished)
        expired = tuple(
            x for x in self.state.leases if (x.holder_workflow_id, x.holder_run_id) in gone
        )
        kept = tuple(x for x in self.state.leases if x not in expired)
        self.state = self.state.model_copy(update={"leases": kept})
        return expired

    def forget_cooldowns(self, now: datetime) -> None:
        """Drop cooldowns that are over, so carried state stays small."""
        kept = tuple(c for c in self.state.cooldowns if c.until > now)
        rooms = tuple(r for r in self.state.rooms if _last_news(r) > now - ROOM_KEPT)
        self.state = self.state.model_copy(update={"cooldowns": kept, "rooms": rooms})

    def _leased(self) -> Counter[str]:
        return Counter(x.account_id for x in self.state.leases)

    def _cooldown(self, account_id: str, now: datetime) -> Cooldown | None:
        for c in self.state.cooldowns:
            if c.account_id == account_id and c.until > now:
                return c
        return None
