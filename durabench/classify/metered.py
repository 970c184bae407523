"""What the gateway's ledger says about an attempt: the only evidence of infrastructure.

The gateway saw every model request the agent made and the model API's answer to each,
outside the sandbox, so the agent cannot write or erase a line of it. Each rule here reads
only the ledger (:class:`~durabench.models.verdict.MeteredUsage`), plus the worker's own
facts where it says so:

- a model the API substituted for the one a request asked for, or an agent that never
  asked for the requested model, is a MODEL MISMATCH (``infra_other``, never scored);
- an MCP lane whose server never answered through the gateway as an MCP server (a
  JSON-RPC result to ``initialize`` or ``tools/list``; a 200 page is none) is
  ``infra_other``;
- a spent budget is the model's end (``model_budget``); more tokens than the budget caps
  the attempt's reward at 0;
- the model API's answer to the last request, when the session did not end well: 429
  (``infra_rate_limit``, or ``infra_usage_cap`` when the API's own error type or headers
  say the account's usage limit; the model's class when the attempt had gone past its
  share of the account's rate limit before it, :mod:`durabench.gateway.rate_share`),
  402 (``infra_usage_cap``), 529 or ``overloaded_error`` (``infra_other``), 401/403
  (``infra_auth``), 5xx (``infra_other``);
- the gateway's own refusals of the agent's requests (budget, a path or model it does not
  pass on, a per-attempt limit) are the agent's doing, never infrastructure; only the
  ones the harness causes (no key on the host, the API unreachable) are.
"""

from __future__ import annotations

from durabench.agents.llm_ids import served_model_matches
from durabench.documents import loads_json
from durabench.models.verdict import ClassifyInput, ExitClass, MeteredUsage, TokenUsage
from durabench.wording import counted

__all__ = [
    "HARNESS_REFUSALS",
    "api_end",
    "metered_mcp",
    "metered_mismatch",
    "model_answered",
    "model_mismatch",
    "over_budget",
    "served_note",
    "token_note",
]

HARNESS_REFUSALS = (
    "upstream unreachable",
    "upstream cut",
    "no key on this host",
    "gateway restarted",
    "gateway overloaded",
)
"""Refusals of the gateway that the harness caused, not the agent's requests (the last one
is written by the worker that saw the gateway's process die: ``gateway/outage.py``)."""
_STREAMED_RATE_LIMITS = ("rate_limit_exceeded", "rate_limit_error")
"""Error types a stream that began with 200 can end in when the provider rate-limits it
(OpenAI Responses' ``response.failed``, Anthropic's ``error`` event)."""
_USAGE_CAP_ERRORS = ("usage_limit_reached", "insufficient_quota", "billing_error")
"""Error types by which an API says the account's usage or credit is spent (Codex's
ChatGPT plan, OpenAI's API, Anthropic's)."""
_CAP_HEADERS = ("anthropic-ratelimit-unified-status",)
"""Headers whose ``rejected`` says a subscription's usage limit (Claude's plans)."""


def metered_mismatch(data: ClassifyInput) -> str:
    """Why the ledger shows another model than the requested one, or ``""``."""
    return model_mismatch(data.requested_model, data.metered)


def model_mismatch(requested: str, m: MeteredUsage | None) -> str:
    """Why the meter ``m`` shows another model than ``requested``, or ``""``.

    The one rule of a swapped model, by which the classifier keeps an attempt out of the
    scores and the audit checks it afterwards (on the ledger kept in the attempt's
    directory). Evidence: the ledger's models (the request's and the response's); a
    transcript that names another model is no evidence, and neither is an auxiliary model
    the agent also asked for; with no meter there is no evidence at all.
    """
    if m is None or not requested:
        return ""
    if m.substituted:
        return f"MODEL MISMATCH: the API answered a request for {m.substituted}"
    if m.asked_models and not any(served_model_matches(requested, a) for a in m.asked_models):
        asked = ", ".join(m.asked_models[:3])
        return f"MODEL MISMATCH: requested {requested}; the agent asked the API only for {asked}"
    return ""


def metered_mcp(data: ClassifyInput) -> str:
    """Why the ledger shows the lane's MCP server never worked, or ``""``.

    Evidence: the ledger's MCP requests, and what the server said to them: only a
    JSON-RPC result to ``initialize`` or ``tools/list`` is an answer, never an HTTP status
    alone. An MCP lane whose model answered through the gateway while its MCP server never
    did there measured the agent without MCP (a session whose model never answered ended
    for that reason, not MCP's).
    """
    m = data.metered
    if not data.mcp_via_gateway or not model_answered(m) or m is None or m.mcp_answered:
        return ""
    tried = "no request"
    if m.mcp_requests:
        tried = f"{m.mcp_requests} request(s), none answered as an MCP server"
    if m.mcp_http_ok:
        tried += (
            f" ({m.mcp_http_ok} answered with a 2xx status but no JSON-RPC result to "
            "initialize or tools/list: not an MCP server at that URL)"
        )
    return (
        f"MCP NOT WORKING: the lane's MCP server got {tried} through the gateway while the "
        f"agent sent {m.requests} to its model, so the session ran without MCP; check the "
        "server's endpoint and token on the worker"
    )


def model_answered(m: MeteredUsage | None) -> bool:
    """Whether the model answered any request: a response named its model or gave output.

    Until it has, nothing in the sandbox ran on the model's word, so what the agent CLI
    printed is the CLI's own, not the model's.
    """
    return m is not None and (bool(m.served_models) or m.tokens.output > 0)


def over_budget(data: ClassifyInput) -> bool:
    """Whether the ledger metered more tokens than the attempt's budget."""
    m = data.metered
    return m is not None and data.budget_tokens is not None and m.tokens.total > data.budget_tokens


def api_end(data: ClassifyInput, ended_badly: bool) -> tuple[ExitClass, str] | None:
    """The class the ledger decides, or ``None`` when it decides none.

    ``ended_badly``: the worker saw the agent killed by its time limit, or the agent's
    output says it failed or names an API failure; only then can the API's last answer
    be why the session ended (a session that went on after a 429 was not ended by it).
    """
    m = data.metered
    if m is None or m.requests == 0:
        return None
    if m.spend_capped:  # the harness stopped the session, whatever the CLI made of it
        return "infra_spend_cap", "the run's spend cap no longer covered the session's requests"
    if m.budget_spent:
        said = f"the attempt's token budget was spent ({counted(m.tokens.total, 'token')}"
        if over_budget(data):
            said += (
                f" metered against a budget of {data.budget_tokens:,}: the work past it scores 0"
            )
        return "model_budget", said + ")"
    if not ended_badly or (m.last_refused and m.last_refused not in HARNESS_REFUSALS):
        return None
    return _last_answer(m, data.timed_out)


def _last_answer(m: MeteredUsage, timed_out: bool) -> tuple[ExitClass, str] | None:
    """The infra class of the model API's answer to the last request, if it is one.

    A rate limit after the attempt went past its share of the account's is the agent's:
    the model's class (its time limit, or its error), never infra.
    """
    wait = f", retry-after {m.last_retry_after} s" if m.last_retry_after else ""
    if m.last_status == 402 or m.last_error in _USAGE_CAP_ERRORS or _cap_header(m):
        why = m.last_error or _cap_header(m) or f"status {m.last_status}"
        return (
            "infra_usage_cap",
            f"the model API refused its last request for the account's usage limit "
            f"({m.last_status}, {why}{wait})",
        )
    limited = m.last_status == 429 or m.last_error in _STREAMED_RATE_LIMITS
    if limited and m.share_passed_by_last:
        return (
            "model_timeout" if timed_out else "model_agent_error",
            f"the model API refused its last request with a rate limit ({m.rate_limited} "
            f"429s in all) after the attempt went past its share of the account's rate "
            f"limit ({m.beyond_share} request(s) beyond it): the agent's own doing",
        )
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
    if m.last_refused in HARNESS_REFUSALS:
        return "infra_other", f"the host failed the last request ({m.last_refused})"
    if m.last_status >= 500:
        why = m.last_error or f"status {m.last_status}"
        return "infra_other", f"the model API failed the last request ({why})"
    return None


def _cap_header(m: MeteredUsage) -> str:
    """``name: rejected`` when the last response's headers say the usage limit, else ``""``."""
    if m.last_status != 429 or not m.last_resets:
        return ""
    try:
        headers = loads_json(m.last_resets)
    except ValueError:
        return ""
    if not isinstance(headers, dict):
        return ""
    for name in _CAP_HEADERS:
        if str(headers.get(name, "")).lower() == "rejected":
            return f"{name}: rejected"
    return ""


def served_note(m: MeteredUsage) -> str:
    """Why no served model is recorded when the API answered none of the requests."""
    return (
        f"; no model answered any of its {m.requests} request(s) (last status "
        f"{m.last_status}), so no served model is recorded"
    )


def token_note(transcript: TokenUsage, metered: MeteredUsage | None) -> str:
    """A note when the transcript's token figures differ from the gateway's, else ``""``."""
    if metered is None or metered.requests == 0:
        return ""
    said, seen = transcript.total, metered.tokens.total
    if said == seen or said == 0:
        return ""
    return f"; the transcript reports {counted(said, 'token')}, the gateway metered {seen:,}"
