"""What the gateway's record says about how an attempt ended, before any text is guessed at.

The gateway saw every model response the agent got, outside the sandbox: a session that
ended while its last request was refused (429, 529, 401/403) ended because of the API,
whatever the CLI printed; a spent budget is the model's end; a model the API substituted,
or an agent that never asked for the requested model, is a mismatch. Each rule is pure.
"""

from __future__ import annotations

from durabench.agents.llm_ids import served_model_matches
from durabench.agents.transcript import TranscriptFacts
from durabench.models.verdict import ClassifyInput, ExitClass, MeteredUsage, TokenUsage

__all__ = ["metered_end", "metered_mcp", "metered_mismatch", "token_note"]

_STREAMED_RATE_LIMITS = ("rate_limit_exceeded", "rate_limit_error")
"""Error types a stream that began with 200 can end in when the provider rate-limits it
(OpenAI Responses' ``response.failed``, Anthropic's ``error`` event)."""


def metered_mismatch(data: ClassifyInput) -> str:
    """Why the metered models show another model than the requested one, or ``""``."""
    m, requested = data.metered, data.requested_model
    if m is None or not requested or not m.asked_models:
        return ""
    if m.substituted:
        return f"MODEL MISMATCH: the API answered a request for {m.substituted}"
    if not any(served_model_matches(requested, asked) for asked in m.asked_models):
        asked = ", ".join(m.asked_models[:3])
        return f"MODEL MISMATCH: requested {requested}; the agent asked the API only for {asked}"
    return ""


def metered_mcp(data: ClassifyInput) -> str:
    """Why the gateway's record shows the lane's MCP server never worked, or ``""``.

    For every CLI, whether or not its transcript reports its MCP servers: an MCP lane
    whose agent talked to its model through the gateway but never got an answer from
    its MCP server there measured the agent without MCP.
    """
    m = data.metered
    if not data.mcp_via_gateway or m is None or m.requests == 0 or m.mcp_answered:
        return ""
    tried = f"{m.mcp_requests} request(s), none answered" if m.mcp_requests else "no request"
    return (
        f"MCP NOT WORKING: the lane's MCP server got {tried} through the gateway while the "
        f"agent sent {m.requests} to its model, so the session ran without MCP; check the "
        "server's endpoint and token on the worker"
    )


def metered_end(data: ClassifyInput, facts: TranscriptFacts) -> tuple[ExitClass, str] | None:
    """The class the gateway's record decides, when the session did not end well."""
    m = data.metered
    if m is None or m.requests == 0:
        return None
    if m.budget_spent:
        return "model_budget", f"the attempt's token budget was spent ({m.tokens.total:,} tokens)"
    ended_badly = data.timed_out or data.exit_code != 0 or facts.errored
    if not ended_badly:
        return None
    wait = f", retry-after {m.last_retry_after} s" if m.last_retry_after else ""
    if m.last_status == 429:
        return (
            "infra_rate_limit",
            f"the model API refused its last request with 429 ({m.rate_limited} in all{wait})",
        )
    if m.last_error in _STREAMED_RATE_LIMITS:
        return "infra_rate_limit", f"the model API's last stream failed with {m.last_error}"
    if m.last_status == 529 or m.last_error == "overloaded_error":
        return "infra_other", f"the model API was overloaded at the end ({m.overloaded} in all)"
    if m.last_status in (401, 403):
        return "infra_auth", f"the model API refused the key with {m.last_status}"
    if m.last_status >= 500 or m.last_error in ("upstream unreachable", "no key on this host"):
        why = m.last_error or f"status {m.last_status}"
        return "infra_other", f"the model API failed the last request ({why})"
    return None


def token_note(transcript: TokenUsage, metered: MeteredUsage | None) -> str:
    """A note when the transcript's token figures differ from the gateway's, else ``""``."""
    if metered is None or metered.requests == 0:
        return ""
    said, seen = transcript.total, metered.tokens.total
    if said == seen or said == 0:
        return ""
    return f"; the transcript reports {said:,} tokens, the gateway metered {seen:,}"
