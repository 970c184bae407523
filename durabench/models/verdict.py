"""What the classifier says about an attempt: its exit class, why, and what it cost."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from durabench.models.prices import PriceTable

__all__ = [
    "INFRA_CLASSES",
    "ClassifyInput",
    "ExitClass",
    "MeteredUsage",
    "ModelTokens",
    "Signals",
    "TokenUsage",
    "TranscriptFormat",
    "Verdict",
    "is_infra",
]

ExitClass = Literal[
    "completed",
    "model_timeout",
    "model_context_exhausted",
    "model_no_code",
    "model_build_failure",
    "model_agent_error",
    "model_output_cap",
    "model_budget",
    "infra_usage_cap",
    "infra_auth",
    "infra_rate_limit",
    "infra_spend_cap",
    "infra_other",
]
"""How an attempt ended, in the CLISpecBench run-eval classes."""

INFRA_CLASSES: frozenset[str] = frozenset(
    {"infra_usage_cap", "infra_auth", "infra_rate_limit", "infra_spend_cap", "infra_other"}
)
"""Classes that say nothing about the model: retried, never scored."""

TranscriptFormat = Literal["claude-code", "codex-cli", "gemini-cli"]
"""Transcript dialects the parsers read."""


def is_infra(exit_class: str) -> bool:
    """Whether ``exit_class`` is an infrastructure failure (never a model data point)."""
    return exit_class in INFRA_CLASSES


class TokenUsage(BaseModel):
    """Tokens an attempt used, as its transcript reports them."""

    model_config = ConfigDict(frozen=True)

    input: int = 0
    """Input tokens (not counting cache reads)."""
    output: int = 0
    """Output tokens."""
    cache_read: int = 0
    """Input tokens served from the prompt cache."""
    cache_write: int = 0
    """Input tokens written to the prompt cache."""

    @property
    def total(self) -> int:
        """Every token counted: input, output and both cache kinds (what a budget spends)."""
        return self.input + self.output + self.cache_read + self.cache_write


class ModelTokens(BaseModel):
    """The tokens the API reported for one model of one provider: what a price applies to."""

    model_config = ConfigDict(frozen=True)

    provider: str
    """The API that answered (``anthropic``, ``openai``, ``gemini``)."""
    model: str
    """The model the requests named (else the one that answered; ``""``: neither said)."""
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens of each kind, summed over those requests."""


class MeteredUsage(BaseModel):
    """An attempt's model traffic as the gateway saw it: the meter of record.

    Read from the API's own responses outside the sandbox, so the agent cannot change it;
    the transcript's figures are only checked against it.
    """

    model_config = ConfigDict(frozen=True)

    requests: int = 0
    """Requests the agent sent through the gateway."""
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens the API reported, summed over every response."""
    by_model: tuple[ModelTokens, ...] = ()
    """The same tokens by provider and model, as they are priced."""
    unmetered: int = 0
    """Successful answers of a billed endpoint that reported no usage (a chat stream
    without its usage chunk): the API bills them, the meter could not count them."""
    served_models: tuple[str, ...] = ()
    """Models that answered, most output first."""
    rate_limited: int = 0
    """Responses that were 429."""
    overloaded: int = 0
    """Responses that were 529 or a stream's ``overloaded_error``."""
    auth_refused: int = 0
    """Responses from the API that were 401 or 403."""
    budget_spent: bool = False
    """The gateway refused a request because the attempt's budget was spent."""
    spend_capped: bool = False
    """The gateway refused a request because the run's spend cap no longer covered it."""
    refused_path: int = 0
    """Requests the gateway refused for an endpoint it does not pass on."""
    refused_model: int = 0
    """Requests the gateway refused for naming a model the attempt was not granted."""
    last_status: int = 0
    """Status of the last answer from the API or the host (the gateway's refusals of the
    agent's own requests are not answers: see ``refused_path``, ``budget_spent``)."""
    last_error: str = ""
    """Error type of that answer, or the host's reason for failing it."""
    last_refused: str = ""
    """Why the gateway itself refused the last request (``budget``, a path or model it does
    not pass on, ``upstream unreachable``), or ``""`` when the model API answered it."""
    last_retry_after: str = ""
    """The last response's ``retry-after``."""
    last_resets: str = ""
    """The last response's rate-limit reset headers (JSON), if any."""
    asked_models: tuple[str, ...] = ()
    """Models the agent's requests named, most requests first."""
    substituted: str = ""
    """``asked X, served Y`` for the first response from another model than its request
    asked for (neither the model nor its dated snapshot); ``""`` when none was."""
    beyond_share: int = 0
    """Requests past the attempt's share of its account's rate limit (the gateway refused
    them, or they went out before the limit was known and were found past it)."""
    share_passed_by_last: bool = False
    """The attempt went past its share at or before the last answer: a 429 then is the
    agent's doing, not the provider's."""
    mcp_requests: int = 0
    """Requests to the lane's MCP server through the gateway."""
    mcp_answered: int = 0
    """Of those, the ones its server answered as an MCP server: a JSON-RPC result to
    ``initialize`` or ``tools/list``."""
    mcp_http_ok: int = 0
    """Of those, the ones answered with a 2xx status, whatever the body said (a web page
    at a wrong URL answers 200: no evidence of MCP)."""


class Signals(BaseModel):
    """What the agent's last message says about its own work."""

    model_config = ConfigDict(frozen=True)

    claims_complete: bool = False
    """It says the work is done."""
    acknowledged_incomplete: bool = False
    """It says the work is not finished."""
    asked_to_continue: bool = False
    """It asks whether to go on."""
    clarifying_question: bool = False
    """It asks the user a question instead of deciding."""
    false_completion: bool = False
    """It claims completion but changed no files."""


class ClassifyInput(BaseModel):
    """Everything the classifier looks at; no I/O happens inside it."""

    model_config = ConfigDict(frozen=True)

    events: tuple[dict[str, object], ...] = ()
    """Transcript events, one JSON object per line of the agent's output."""
    transcript_format: TranscriptFormat | None = None
    """Dialect of ``events``; ``None`` when the agent writes no transcript (oracle, nop)."""
    requested_model: str = ""
    """The model the run asked for."""
    exit_code: int = 0
    """The agent process's exit code."""
    timed_out: bool = False
    """Whether the time limit killed the agent."""
    wall_seconds: float = 0.0
    """How long the agent ran."""
    files_changed: int = 0
    """Workspace files the agent changed."""
    build_failed: bool = False
    """Whether the workspace failed to build after the agent."""
    stderr_tail: str = ""
    """The end of the agent's stderr: why a CLI that never started a session stopped."""
    mcp_via_gateway: bool = False
    """Whether the lane's MCP server is reached through the model gateway (an HTTP server,
    an agent that calls a model): then the gateway's record says whether it answered."""
    mcp_servers: tuple[str, ...] | None = None
    """MCP servers the lane's config gives the agent (empty on the baseline lane), checked
    against the CLI's own report; ``None`` when the lane is unknown (not checked)."""
    metered: MeteredUsage | None = None
    """The gateway's record of the attempt's model traffic; ``None`` when none went
    through it (agents without a model, or runs before the gateway)."""
    expects_change: bool = True
    """Whether the task asks for a change; a text task (a question) is answered in the final
    message, so changing no file is no failure there."""
    model_via_gateway: bool = False
    """Whether the agent's model traffic goes through the gateway (a real CLI, or a replay
    with a recorded ledger): then ``metered`` is the whole record of what the model API
    answered, and ``None`` means no request reached it."""
    budget_tokens: int | None = None
    """The attempt's token budget (``--budget``), if any: work past it is not scored."""
    prices: PriceTable = Field(default_factory=PriceTable)
    """The prices the run is costed with: the metered tokens at these are its cost."""


class Verdict(BaseModel):
    """The classifier's answer."""

    model_config = ConfigDict(frozen=True)

    exit_class: ExitClass
    """How the attempt ended."""
    reason: str
    """Why, in a sentence a person can check against the transcript."""
    served_model: str | None = None
    """The model that answered, as the gateway metered it; ``None`` when the API served no
    answer (every request refused: 429, 529, 401) or none reached it, the reason says which.
    Only an agent with no model API (a replay without a ledger) gives its transcript's word."""
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens used."""
    reward_cap: float | None = None
    """The most the attempt may score: ``0.0`` when the gateway metered more tokens than its
    budget (work past the budget is not the benchmark's), else ``None``."""
    cost_usd: float | None = None
    """What the attempt cost in USD: the gateway's metered tokens at the run's prices (the
    meter of record); ``None`` when a model it used has no price (``unpriced_model``), or,
    for an agent whose model traffic no gateway carries, the CLI's figure if it gave one."""
    cli_cost_usd: float | None = None
    """The cost the agent CLI printed, if it did: the agent's word, kept as a cross-check
    (the reason names a difference from ``cost_usd``)."""
    unpriced_model: str = ""
    """A model the gateway metered tokens of that no price covers; ``""`` when priced."""
    metered: MeteredUsage | None = None
    """The gateway's meter, when the attempt's traffic went through it: ``tokens`` and
    ``served_model`` are then its figures, not the transcript's."""
    last_message: str = ""
    """The agent's final message, whole: the attempt keeps it in ``final_message.txt``, and
    a display copy of its start travels on."""
    signals: Signals = Field(default_factory=Signals)
    """What the last message says."""
    classifier_version: int
    """Version of the pattern table that decided."""
    cli_version: str | None = None
    """The agent CLI's version as its transcript's init event reports it, if it does."""
    claimed_class: ExitClass | None = None
    """Unverified: the infra class the agent's own output claims (a rate limit, a usage cap,
    another model serving), named only where no gateway ledger can confirm or deny it (a
    transcript from another harness, ``starter classify`` without ``--ledger``). For
    triage of foreign results; never an attempt's class, a retry or a score."""
    cap_resets_at: datetime | None = None
    """When the account may be asked again, from the model API's own headers in the
    gateway's ledger (``retry-after``, reset headers), never from the agent's text. For
    ``infra_usage_cap``: that, at most ``DURABENCH_USAGE_CAP_COOLDOWN_MAX_SEC`` ahead, else
    ``DURABENCH_USAGE_CAP_COOLDOWN_SEC``. For ``infra_rate_limit``: that, at most an hour
    ahead, if the API said."""
