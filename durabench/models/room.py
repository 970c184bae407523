"""What a model API said is left of an account's rate limits: the gateway's readings.

Every answer the gateway passes on carries the API's rate-limit headers (or, for Gemini,
a quota error); the gateway reads them into a :class:`RoomReading` per account and model
(:mod:`durabench.gateway.room`). The account pool gathers the readings of every host
(:class:`RoomState`) and starts fewer sessions on an account and model as what is left
falls, more as it recovers (:mod:`durabench.accounts.room`). No secret and nothing an
agent wrote is in them: numbers and times the API sent.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

__all__ = ["STATING_APIS", "Bucket", "RoomReading", "RoomState", "Weighed"]

STATING_APIS = frozenset({"anthropic", "openai"})
"""APIs that state what is left of their limits on every answer (Gemini says so only in
a 429): a session on them is answered with its room before the next one starts."""

MAX_LIMIT = 10**15
"""No rate limit is larger: a bigger number in a header is not believed."""


class Bucket(BaseModel):
    """One limit an answer stated: its size, what is left, when it is full again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    limit: int = Field(gt=0, le=MAX_LIMIT)
    """The most the API allows in its window (a minute, for every provider here)."""
    remaining: int = Field(ge=0, le=MAX_LIMIT)
    """What is left now."""
    reset_at: AwareDatetime | None = None
    """When the API said it is whole again (``None``: it did not say)."""

    @model_validator(mode="after")
    def _within_limit(self) -> Bucket:
        if self.remaining > self.limit:
            raise ValueError(f"remaining {self.remaining} is more than the limit {self.limit}")
        return self


class RoomReading(BaseModel):
    """What one answer of the API said of an account's room for one model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    """The API (``anthropic``, ``openai``, ``gemini``)."""
    account: str
    """The pool's account id (``""``: the worker's own key)."""
    model: str
    """The model asked for (limits are per model)."""
    observed_at: AwareDatetime
    """When the gateway read the answer (the gateway host's clock)."""
    requests: Bucket | None = None
    """Requests a minute."""
    input_tokens: Bucket | None = None
    """Input tokens a minute (OpenAI's ``tokens``, which counts both, is read here)."""
    output_tokens: Bucket | None = None
    """Output tokens a minute."""
    full_until: AwareDatetime | None = None
    """The API refused for a rate limit (429) and said, or implied, to wait until then."""
    host: str = ""
    """The gateway's host, which counted ``sessions``."""
    sessions: int = Field(default=0, ge=0)
    """Sessions on the account and model the gateway's host has passed a request of in
    the last minute and that still run: the ones the API's numbers already weigh."""

    def buckets(self) -> tuple[Bucket, ...]:
        """Every limit the answer stated."""
        return tuple(b for b in (self.requests, self.input_tokens, self.output_tokens) if b)

    def key(self) -> tuple[str, str]:
        """The pool's key for it: ``(account, model)``."""
        return (self.account, self.model)

    def then(self, reading: RoomReading) -> RoomReading:
        """What is known of the account and model once ``reading`` (of them) comes after this.

        The newer of the two by ``observed_at`` (readings arrive out of order: from other
        hosts, or a stream's after a 429 sent while it ran), keeping the later
        ``full_until`` still ahead of it: an answer after a 429 does not end the 429's wait.
        """
        new, old = (reading, self) if reading.observed_at > self.observed_at else (self, reading)
        wait = old.full_until
        if wait is None or wait <= new.observed_at:
            return new
        if new.full_until is not None and new.full_until >= wait:
            return new
        return new.model_copy(update={"full_until": wait})


class Weighed(BaseModel):
    """How many running sessions of an account and model one host's gateway has seen."""

    model_config = ConfigDict(frozen=True)

    host: str
    sessions: int
    observed_at: datetime


class RoomState(BaseModel):
    """The pool's view of one account and model: what the API said, and how many it carries."""

    model_config = ConfigDict(frozen=True)

    account: str
    """Account id."""
    model: str
    """Model id."""
    latest: RoomReading | None = None
    """The newest reading from any host."""
    allowed: int = Field(default=2, ge=1)
    """Sessions at once the API has shown it carries (the pool starts no more): two at
    first, one more each time what is left holds up, fewer when it runs low."""
    changed_at: datetime | None = None
    """When ``allowed`` last changed (or the first session started)."""
    base: RoomReading | None = None
    """The newest reading when ``allowed`` last changed: the trend is measured from it."""
    weighed: tuple[Weighed, ...] = ()
    """Each host's newest count of the sessions the API has seen."""
