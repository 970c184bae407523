"""The parallel slots a run proposes when nobody says ``--parallel``, and how it got them.

Three sources each bound the pairs in flight, and the plan takes the least:

* **accounts**: the slots of the agent's accounts in ``accounts.toml`` that take leases
  (not cooling, not blocked); every running arm holds one;
* **sandboxes**: what the sandbox backend admits at once
  (:func:`~durabench.sandbox.admission.admitted_sandboxes`); every running arm holds one;
* **rate limits**: the model's requests and input tokens per minute, over what one
  session is assumed to send: as the API's own headers stated them to the gateway
  (:func:`stated_limit`, from the pool's readings), else the first guess of a table
  (:mod:`durabench.agents.llm_rate_limits`). Once the run starts, the account pool starts
  sessions as the API says there is room (:mod:`durabench.accounts.room`).

Each source's number is in sessions (or sandboxes); a pair runs one per lane, so pairs
are that number over the lanes, at least one (a lone slot still runs pairs, one arm at a
time). A source that knows nothing sets no bound; when none sets one the default
(:data:`~durabench.models.run.DEFAULT_PARALLEL`) is taken. ``--parallel N`` wins over
all of them, and the plan warns where N is more than a source allows.

Pure functions of what the plan activity gathered: tested without a server or a pool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from durabench.agents import agent_class
from durabench.agents.llm_ids import served_model_matches
from durabench.agents.llm_rate_limits import rate_limit_of
from durabench.models.accounts import AccountHealth, AccountState
from durabench.models.parallelism import ModelRateLimit, ParallelBound, Parallelism
from durabench.models.room import RoomState
from durabench.models.run import DEFAULT_PARALLEL, RunPlan
from durabench.sandbox.admission import Admission, AdmissionFacts, admitted_sandboxes
from durabench.settings.values import Settings
from durabench.wording import counted

__all__ = [
    "USABLE_STATES",
    "accounts_bound",
    "choose_parallel",
    "over_bound_warnings",
    "rate_limit_bound",
    "sandboxes_bound",
    "stated_limit",
    "with_parallelism",
]

USABLE_STATES: tuple[AccountState, ...] = ("ready", "token-low", "busy")
"""Accounts whose slots a run may lease (``busy`` ones free theirs as attempts end)."""

_WAIT = {
    "accounts": "arms past it wait for an account slot",
    "sandboxes": "attempts past it wait for a sandbox slot (the quota holds across every host)",
    "rate limits": "on accounts, sessions past it wait for the API to say there is room",
}


def _pairs(sessions: int, lanes: int) -> int:
    return max(1, sessions // max(1, lanes))


def _per_pair(lanes: int) -> str:
    return f"÷ {counted(lanes, 'lane')} a pair" if lanes > 1 else "1 lane"


def accounts_bound(accounts: Sequence[AccountHealth], agent: str, lanes: int) -> ParallelBound:
    """Pairs the slots of ``agent``'s usable accounts hold; none listed: no bound."""
    mine = [a for a in accounts if a.agent == agent]
    if not mine:
        detail = f"no {agent} account in accounts.toml: keys come from the workers' environment"
        return ParallelBound(source="accounts", pairs=None, detail=detail)
    usable = [a for a in mine if a.state in USABLE_STATES]
    slots = sum(a.slots for a in usable)
    left = [f"{a.id} {a.state}" for a in mine if a.state not in USABLE_STATES]
    out = f", not {', '.join(left)}" if left else ""
    if not usable:
        return ParallelBound(source="accounts", pairs=0, detail=f"no {agent} account usable{out}")
    detail = (
        f"{counted(slots, 'slot')} of {len(usable)} {agent} account(s){out}, {_per_pair(lanes)}"
    )
    return ParallelBound(source="accounts", pairs=_pairs(slots, lanes), detail=detail)


def sandboxes_bound(admission: Admission, lanes: int) -> ParallelBound:
    """Pairs the sandbox backend's admitted sandboxes hold."""
    if admission.sandboxes is None:
        return ParallelBound(source="sandboxes", pairs=None, detail=admission.detail)
    sandboxes = counted(admission.sandboxes, "sandbox")
    detail = f"{sandboxes}: {admission.detail}, {_per_pair(lanes)}"
    return ParallelBound(
        source="sandboxes", pairs=_pairs(admission.sandboxes, lanes), detail=detail
    )


def stated_limit(
    rooms: Sequence[RoomState], accounts: Sequence[str], model: str
) -> tuple[ModelRateLimit, str] | None:
    """The least limits the API's headers stated for ``model`` on one of ``accounts``.

    With where they were read; ``None`` when no reading states both requests and input
    tokens. The least, as the accounts may share one organization's limits.
    """
    stated = [
        (ModelRateLimit(rpm=r.latest.requests.limit, tpm=r.latest.input_tokens.limit), r)
        for r in rooms
        if r.account in accounts
        and (served_model_matches(model, r.model) or served_model_matches(r.model, model))
        and r.latest is not None
        and r.latest.requests is not None
        and r.latest.input_tokens is not None
    ]
    if not stated:
        return None
    limit, room = min(stated, key=lambda s: (s[0].rpm, s[0].tpm, s[1].account))
    seen = room.latest.observed_at if room.latest else None
    return limit, f"stated by the API for account {room.account} at {seen:%H:%M} UTC"


def rate_limit_bound(
    model: str | None,
    lanes: int,
    overrides: Mapping[str, ModelRateLimit],
    session: ModelRateLimit,
    stated: tuple[ModelRateLimit, str] | None = None,
) -> ParallelBound:
    """Pairs the model's rate limits carry, a session sending what ``session`` says.

    ``model``: ``None`` for an agent that calls no model. ``stated``: the limits the API's
    headers stated (:func:`stated_limit`), which win over the table's first guess. The
    limits are taken to be one organization's, shared by every account of the run (the
    cautious reading).
    """
    if model is None:
        return ParallelBound(source="rate limits", pairs=None, detail="the agent calls no model")
    limit = stated[0] if stated else rate_limit_of(model, overrides)
    if limit is None:
        detail = (
            f"no known rate limits of {model}; DURABENCH_MODEL_RATE_LIMITS can name them "
            "(the run still follows what the API's headers say is left)"
        )
        return ParallelBound(source="rate limits", pairs=None, detail=detail)
    if stated:
        where = stated[1]
    elif rate_limit_of(model, {}) != limit:
        where = "first guess: DURABENCH_MODEL_RATE_LIMITS"
    else:
        where = "first guess: published limits"
    by_requests, by_tokens = limit.rpm // session.rpm, limit.tpm // session.tpm
    sessions = min(by_requests, by_tokens)
    detail = (
        f"{model} ({where}): {limit.rpm:,} requests/min ÷ {session.rpm:,} = "
        f"{counted(by_requests, 'session')}, "
        f"{limit.tpm:,} tokens/min ÷ {session.tpm:,} = {by_tokens:,}, {_per_pair(lanes)} "
        f"(assumed: a session sends at most {counted(session.rpm, 'request')} and "
        f"{session.tpm:,} input tokens a minute, DURABENCH_SESSION_RPM and _TPM; the run's "
        "accounts share one organization's limits; once running, sessions start as the "
        "API's headers say there is room)"
    )
    return ParallelBound(source="rate limits", pairs=_pairs(sessions, lanes), detail=detail)


def choose_parallel(bounds: Sequence[ParallelBound], asked: int | None) -> Parallelism:
    """``asked`` if given, else the least bound (the first source of it), else the default."""
    known = [b for b in bounds if b.pairs is not None]
    least = min(known, key=lambda b: b.pairs or 0) if known else None
    derived = least.pairs if least is not None else None
    if asked is not None:
        return Parallelism(parallel=asked, bounds=tuple(bounds), overridden=True, derived=derived)
    return Parallelism(
        parallel=max(1, derived) if derived is not None else DEFAULT_PARALLEL,
        bounds=tuple(bounds),
        bound_by=least.source if least is not None else None,
        derived=derived,
    )


def over_bound_warnings(parallelism: Parallelism) -> tuple[str, ...]:
    """One line per source that allows fewer pairs than ``--parallel`` asked for."""
    if not parallelism.overridden:
        return ()
    n = parallelism.parallel
    return tuple(
        f"--parallel {n} is more than the {b.source} allow "
        f"({counted(b.pairs or 0, 'pair')}: {b.detail}); "
        f"{_WAIT[b.source]}"
        for b in parallelism.bounds
        if b.pairs is not None and b.pairs < n
    )


def with_parallelism(
    plan: RunPlan,
    accounts: Sequence[AccountHealth],
    hosts: Sequence[str],
    settings: Settings,
    backend: str,
    rooms: Sequence[RoomState] = (),
) -> RunPlan:
    """``plan`` with its parallel slots derived (or its ``--parallel`` checked against them).

    ``accounts``: the health of the pool's accounts now; ``hosts``: the worker hosts seen
    polling; ``backend``: the sandbox backend the attempts run on; ``rooms``: what the
    API's headers last said of the accounts' limits (the pool's readings).
    """
    lanes, request = len(plan.lanes), plan.request
    calls_model = agent_class(request.agent.name).model_api is not None
    session = ModelRateLimit(rpm=settings.session_rpm, tpm=settings.session_tpm)
    admission = admitted_sandboxes(backend, AdmissionFacts(settings, hosts))
    mine = [a.id for a in accounts if a.agent == request.agent.name]
    stated = stated_limit(rooms, mine, request.agent.model) if calls_model else None
    bounds = (
        accounts_bound(accounts, request.agent.name, lanes),
        sandboxes_bound(admission, lanes),
        rate_limit_bound(
            request.agent.model if calls_model else None,
            lanes,
            settings.model_rate_limits,
            session,
            stated,
        ),
    )
    parallelism = choose_parallel(bounds, request.parallel)
    warnings = (*plan.warnings, *over_bound_warnings(parallelism))
    return plan.model_copy(update={"parallelism": parallelism, "warnings": warnings})
