"""The exit classifier: a pure function from an attempt's evidence to its exit class.

The rule: whether an attempt counts, is retried as infrastructure, is excluded or cools an
account is decided only from evidence outside the agent's reach. That is the gateway's
ledger (what the model API answered, :mod:`durabench.classify.metered`) and what the
worker saw (the time limit, the wall time, the workspace diff, the build). The agent's
own output (transcript, final message, stderr, its CLI's exit code) only picks among the
``model_*`` classes and adds detail to a reason: a usage cap, rate limit or auth failure
it claims that the ledger does not show is quoted in the reason and the attempt stays the
model's. Rules, in order, each with its evidence:

1. MODEL MISMATCH [ledger]: the API served another model than a request asked for, or
   the agent never asked for the requested one: ``infra_other``, never scored.
2. MCP lane [ledger]: its server never answered through the gateway: ``infra_other``.
3. Budget [ledger]: spent is ``model_budget``; tokens past the budget cap the reward at 0.
4. The API's last answer [ledger, gated by the worker's time limit or the agent's word
   that it failed]: 429, 402, 529, 401/403, 5xx are ``infra_*`` (``metered.py``). The
   gateway's refusals of the agent's own requests are not.
   A 429 backs the agent's word that it was a usage cap; where the model never answered
   (no response named a model), the CLI's words name which infra class.
5. The model never answered [ledger, worker]: an agent that calls its model through the
   gateway, with no answered request in the ledger (and, with none sent, not killed at
   its time limit), never had the model act: ``infra_other``, or the class the CLI's own
   infra signature names (a cap or rate limit only with the API's 4xx in the ledger), or a
   model-side signature's class (the API refused the prompt as too long).
6. Model signatures [transcript, among model classes only]: ``model_output_cap``,
   ``model_context_exhausted``.
7. Killed by the time limit [worker]: ``model_timeout``.
8. A non-zero exit or an error result [agent]: ``model_agent_error``.
9. A text task [worker, transcript]: ``completed`` with an answer, else ``model_no_code``.
   No file changed [worker]: ``model_no_code``; the build failed [worker]:
   ``model_build_failure``. Otherwise ``completed``.

Served model, tokens and cost come from the ledger when the attempt has one: the cost is
its metered tokens at the run's prices, the CLI's own figure only a cross-check.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from durabench.agents.dialects import parse_transcript
from durabench.agents.gemini_transcript import gemini_retry
from durabench.agents.llm_ids import served_model_matches
from durabench.agents.transcript import TranscriptFacts
from durabench.classify.mcp_report import mcp_mismatch
from durabench.classify.metered import (
    api_end,
    metered_mcp,
    metered_mismatch,
    model_answered,
    over_budget,
    served_note,
    token_note,
)
from durabench.classify.table import PatternGroup, PatternTable, load_table
from durabench.models.verdict import ClassifyInput, ExitClass, MeteredUsage, Signals, Verdict
from durabench.prices.cost import attempt_cost, cli_cost_note, unmetered_note

__all__ = ["classify", "parse_transcript", "served_model_matches"]

_STDERR_RETRIES: dict[str, Callable[[str], str]] = {"gemini-cli": gemini_retry}
"""Dialects whose CLI announces its model-API retries on stderr, not in the transcript."""
_STATUS_LINE = 300
"""A final message at most this long, on one line, may be a CLI's status, not the model's."""
_NEEDS_REFUSAL = ("infra_usage_cap", "infra_rate_limit")
"""Classes that cool an account: only when the model API itself refused (a 4xx)."""

Decision = tuple[ExitClass, str]


def _first_match(groups: tuple[PatternGroup, ...], texts: list[str]) -> Decision | None:
    for group in groups:
        for text in texts:
            pattern = group.search(text)
            if pattern is not None:
                return group.exit_class, f"{text.strip()[:240]!r} matches {pattern!r}"
    return None


def _cap_as_final_answer(table: PatternTable, facts: TranscriptFacts) -> Decision | None:
    """A usage cap printed as the session's answer; a model's summary is longer or multi-line."""
    text = facts.last_message
    if not text or "\n" in text or len(text) > _STATUS_LINE:
        return None
    caps = tuple(g for g in table.infra if g.exit_class == "infra_usage_cap")
    return _first_match(caps, [text])


def _claim(data: ClassifyInput, facts: TranscriptFacts, table: PatternTable) -> Decision | None:
    """The infrastructure failure the agent's own output names, if any [agent's word].

    An infra signature among the errors at the session's end, a usage cap as its one-line
    final answer, or the model-API retry it ended in. Never a class by itself: only with
    the ledger's word (rule 4).
    """
    tail = [e.text for e in facts.errors if e.index >= facts.n_events - table.tail_events]
    found = _first_match(table.infra, tail) or _cap_as_final_answer(table, facts)
    if found is not None:
        return found
    read = _STDERR_RETRIES.get(data.transcript_format or "")
    retrying = facts.retrying or (read(data.stderr_tail) if read and facts.awaiting_model else "")
    if retrying:
        exit_class, why = _first_match(table.infra, [retrying]) or ("infra_other", repr(retrying))
        return exit_class, f"the session ended while retrying the model API: {why}"
    return None


def _api_refused(m: MeteredUsage | None) -> bool:
    """Whether the model API itself (not the gateway) refused the last request with a 4xx."""
    return m is not None and 400 <= m.last_status < 500 and not m.last_refused


def _model_silent(
    data: ClassifyInput, facts: TranscriptFacts, table: PatternTable
) -> Decision | None:
    """Rule 5: the model never answered [ledger], so nothing the agent printed is its.

    An agent that calls its model through the gateway and got no answer from it (no
    request, or every one refused) never had the model act: the CLI's own words pick the
    class. A cap or rate limit needs the API's own 4xx refusal in the ledger (it cools an
    account);
    a model-side signature (a prompt too long) stays the model's; else ``infra_other``.
    A CLI that sent nothing and was killed at its time limit stays ``model_timeout``.
    """
    m = data.metered
    requests = m.requests if m is not None else 0
    if not data.model_via_gateway or model_answered(m) or (requests == 0 and data.timed_out):
        return None
    lines = [line for line in data.stderr_tail.splitlines() if line.strip()]
    said = [e.text for e in facts.errors] + lines
    where = "the gateway saw no model request" if requests == 0 else "the model answered none"
    matched = _first_match(table.infra, said)
    if matched is not None:
        exit_class, why = matched
        if exit_class in _NEEDS_REFUSAL and not _api_refused(m):
            exit_class = "infra_other"
        return exit_class, f"{where} of its {requests} request(s), so no session began: {why}"
    matched = _first_match(table.model, said)
    if matched is not None:
        return matched[0], f"the model API refused the prompt: {matched[1]}"
    last = lines[-1].strip()[:240] if lines else "nothing on stderr"
    return (
        "infra_other",
        f"the agent CLI exited {data.exit_code} and {where} of its {requests} request(s), "
        f"so no session began: {last!r}",
    )


def _model_class(data: ClassifyInput, facts: TranscriptFacts, table: PatternTable) -> Decision:
    """Rules 6-9: the model's class, from the worker's facts and the model's own output."""
    tail = [e.text for e in facts.errors if e.index >= facts.n_events - table.tail_events]
    matched = _first_match(table.model, tail)
    if matched is not None:
        return matched[0], f"error at the end of the session: {matched[1]}"
    if data.timed_out:
        return "model_timeout", f"killed by the time limit after {data.wall_seconds:.0f} s"
    if data.exit_code != 0 or facts.errored:
        last_error = facts.errors[-1].text.strip()[:240] if facts.errors else "no error text"
        return "model_agent_error", f"exit code {data.exit_code}, no infra signature ({last_error})"
    if not data.expects_change:
        if not facts.last_message:
            return "model_no_code", "ended on its own without an answer"
        return "completed", f"ended on its own after {data.wall_seconds:.0f} s and answered"
    if data.files_changed == 0:
        return "model_no_code", "ended on its own without changing a file"
    if data.build_failed:
        return (
            "model_build_failure",
            f"changed {data.files_changed} files; the workspace does not build",
        )
    return (
        "completed",
        f"ended on its own after {data.wall_seconds:.0f} s, {data.files_changed} files changed",
    )


def _refined(ended: Decision, claim: Decision | None, data: ClassifyInput) -> ExitClass:
    """The ledger's infra class, or the agent's more precise word for it.

    A 429 backs a usage-cap claim (the API refused for a limit; which limit, the CLI may
    say). Where the model never answered, the CLI's own words name the failure.
    """
    if claim is None or not claim[0].startswith("infra_") or not ended[0].startswith("infra_"):
        return ended[0]
    if ended[0] == "infra_rate_limit" and claim[0] == "infra_usage_cap":
        return claim[0]
    return claim[0] if not model_answered(data.metered) else ended[0]


def _decide(data: ClassifyInput, facts: TranscriptFacts, table: PatternTable) -> Decision:
    if said := metered_mismatch(data) or metered_mcp(data):
        return "infra_other", said
    claim = _claim(data, facts, table)
    ended_badly = data.timed_out or data.exit_code != 0 or facts.errored or claim is not None
    ended = api_end(data, ended_badly)
    if ended is not None:
        return _refined(ended, claim, data), ended[1] + (
            f"; the agent's output says {claim[1]}" if claim else ""
        )
    silent = _model_silent(data, facts, table)
    if silent is not None:
        return silent
    exit_class, reason = _model_class(data, facts, table)
    if claim is not None:
        reason += (
            f"; the agent's output claims {claim[0]} ({claim[1]}), but the gateway recorded "
            "no such answer from the model API, so the attempt is the model's"
        )
    if mcp_said := mcp_mismatch(data.mcp_servers, facts.mcp_servers):
        reason += f"; the CLI's own report says {mcp_said} (its word only, not the gateway's)"
    return exit_class, reason


def _signals(
    table: PatternTable, message: str, files_changed: int, expects_change: bool
) -> Signals:
    found = {
        name: any(re.search(p, message, re.IGNORECASE | re.MULTILINE) for p in patterns)
        for name, patterns in table.signals.items()
    }
    claims = found.get("claims_complete", False) and not found.get("acknowledged_incomplete")
    return Signals(
        claims_complete=claims,
        acknowledged_incomplete=found.get("acknowledged_incomplete", False),
        asked_to_continue=found.get("asked_to_continue", False),
        clarifying_question=found.get("clarifying_question", False),
        false_completion=claims and files_changed == 0 and expects_change,
    )


def _cost(data: ClassifyInput, cli: float | None) -> tuple[float | None, str, str]:
    """The attempt's cost, the model that left it unpriced, and a note on the CLI's figure.

    Metered traffic is costed at the run's prices, whatever the CLI printed; without a
    gateway (a replay with no ledger) the CLI's figure is all there is.
    """
    if not data.model_via_gateway and (data.metered is None or data.metered.requests == 0):
        return cli, "", ""
    cost = attempt_cost(data.metered, data.prices, data.requested_model)
    return cost.usd, cost.unpriced, unmetered_note(data.metered) + cli_cost_note(cost.usd, cli)


def classify(
    data: ClassifyInput, table: PatternTable | None = None, facts: TranscriptFacts | None = None
) -> Verdict:
    """The verdict on one attempt.

    ``facts``: the transcript already read (the worker streams it); else ``data.events``.
    """
    table = table or load_table()
    if facts is None:
        facts = parse_transcript(data.transcript_format, data.events)
    exit_class, reason = _decide(data, facts, table)
    m = data.metered if data.metered is not None and data.metered.requests > 0 else None
    served = facts.served_model if not data.model_via_gateway else None
    if m is not None:
        served = m.served_models[0] if m.served_models else None
        reason += "" if served else served_note(m)
    cost, unpriced, cost_note = _cost(data, facts.cost_usd)
    return Verdict(
        exit_class=exit_class,
        reason=reason + token_note(facts.tokens, m) + cost_note,
        served_model=served,
        tokens=m.tokens if m else facts.tokens,
        metered=m,
        reward_cap=0.0 if over_budget(data) else None,
        cost_usd=cost,
        cli_cost_usd=facts.cost_usd,
        unpriced_model=unpriced,
        last_message=facts.last_message,
        signals=_signals(table, facts.last_message, data.files_changed, data.expects_change),
        classifier_version=table.version,
    )
