"""The exit classifier: a pure function from what an attempt left to its exit class.

Rules, in order (CLISpecBench run-eval):

1. The served model must be the requested one or its dated snapshot; otherwise
   ``infra_other`` (MODEL MISMATCH): the attempt measured another model and never counts.
2. An infra signature among the errors at the end of the session (usage cap, auth, rate
   limit, other) wins over wall time, tool calls, a timeout or a partial score. A
   usage-cap message as the session's final one-line answer is ``infra_usage_cap`` too:
   CLIs print caps as a plain result (``subtype: success``, no error flag) as well.
   Then the CLI's MCP report must match the lane (``mcp_report.py``): an MCP lane whose
   server did not connect, or a baseline that shows one, is ``infra_other``.
3. A model-side error signature: ``model_output_cap``, ``model_context_exhausted``. Then
   the gateway's record of how the session ended (``metered.py``). Then a session that
   ended (killed or giving up) while its CLI retried the model API is infra: the retry's
   signature (a 429 is ``infra_rate_limit``), else ``infra_other``. Gemini CLI prints its
   retries only on stderr: its last one counts when the transcript ends awaiting the model.
4. An agent CLI that exited non-zero without a transcript never began a session, so the
   model was never asked: an infra signature in its stderr, else ``infra_other``.
5. Killed by the time limit: ``model_timeout``.
6. A non-zero exit or an error result with no signature: ``model_agent_error``.
7. A text task (no change expected) is ``completed`` with an answer, else ``model_no_code``.
   No file changed: ``model_no_code``; the workspace does not build: ``model_build_failure``.
8. Otherwise ``completed``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from durabench.agents.claude_transcript import parse_claude
from durabench.agents.codex_transcript import parse_codex
from durabench.agents.gemini_transcript import gemini_retry, parse_gemini
from durabench.agents.llm_ids import served_model_matches
from durabench.agents.transcript import TranscriptFacts
from durabench.classify.mcp_report import mcp_mismatch
from durabench.classify.metered import metered_end, metered_mcp, metered_mismatch, token_note
from durabench.classify.table import PatternGroup, PatternTable, load_table
from durabench.models.verdict import ClassifyInput, ExitClass, Signals, TranscriptFormat, Verdict

__all__ = ["classify", "parse_transcript", "served_model_matches"]

_PARSERS = {"claude-code": parse_claude, "codex-cli": parse_codex, "gemini-cli": parse_gemini}
_STDERR_RETRIES: dict[str, Callable[[str], str]] = {"gemini-cli": gemini_retry}
"""Dialects whose CLI announces its model-API retries on stderr, not in the transcript."""
_STATUS_LINE = 300
"""A final message at most this long, on one line, may be a CLI's status, not the model's."""


def parse_transcript(fmt: TranscriptFormat | None, events: list[dict[str, Any]]) -> TranscriptFacts:
    """Facts of ``events`` in dialect ``fmt`` (no transcript: empty facts)."""
    if fmt is None or not events:
        return TranscriptFacts(n_events=len(events))
    return _PARSERS[fmt](events)


def _first_match(
    groups: tuple[PatternGroup, ...], texts: list[str]
) -> tuple[ExitClass, str] | None:
    for group in groups:
        for text in texts:
            pattern = group.search(text)
            if pattern is not None:
                return group.exit_class, f"{text.strip()[:240]!r} matches {pattern!r}"
    return None


def _cap_as_final_answer(
    table: PatternTable, facts: TranscriptFacts
) -> tuple[ExitClass, str] | None:
    """A usage cap printed as the session's answer; a model's summary is longer or multi-line."""
    text = facts.last_message
    if not text or "\n" in text or len(text) > _STATUS_LINE:
        return None
    caps = tuple(g for g in table.infra if g.exit_class == "infra_usage_cap")
    return _first_match(caps, [text])


def _retrying(data: ClassifyInput, facts: TranscriptFacts) -> str:
    """The retry the session ended in, or ``""``.

    The transcript's, else the last its stderr announced while the transcript awaited the
    model (a retry the model answered after is over), unless the gateway saw the model
    API's last answer (its record has decided any refusal by then: that retry was earlier).
    """
    read = _STDERR_RETRIES.get(data.transcript_format or "")
    metered = data.metered is not None and data.metered.requests > 0
    if facts.retrying or read is None or not facts.awaiting_model or metered:
        return facts.retrying
    return read(data.stderr_tail)


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


def _decide(
    data: ClassifyInput, facts: TranscriptFacts, table: PatternTable
) -> tuple[ExitClass, str]:
    served = facts.served_model
    if served and data.requested_model and not served_model_matches(data.requested_model, served):
        return "infra_other", f"MODEL MISMATCH: requested {data.requested_model}, served {served}"
    mismatch = metered_mismatch(data)
    if mismatch:
        return "infra_other", mismatch
    tail = [e.text for e in facts.errors if e.index >= facts.n_events - table.tail_events]
    matched = _first_match(table.infra, tail)
    if matched is not None:
        return matched[0], f"error at the end of the session: {matched[1]}"
    capped = _cap_as_final_answer(table, facts)
    if capped is not None:
        return capped[0], f"the session's final answer is a usage cap: {capped[1]}"
    if mcp_said := mcp_mismatch(data.mcp_servers, facts.mcp_servers):  # after caps: they
        return "infra_other", mcp_said  # cool the account
    if mcp_said := metered_mcp(data):
        return "infra_other", mcp_said
    matched = _first_match(table.model, tail)
    if matched is not None:
        return matched[0], f"error at the end of the session: {matched[1]}"
    metered = metered_end(data, facts)
    if metered is not None:
        return metered
    if retrying := _retrying(data, facts):
        exit_class, why = _first_match(table.infra, [retrying]) or ("infra_other", repr(retrying))
        return exit_class, f"the session ended while retrying the model API: {why}"
    if data.transcript_format and not facts.n_events and data.exit_code and not data.timed_out:
        lines = [line for line in data.stderr_tail.splitlines() if line.strip()]
        matched = _first_match(table.infra, lines)
        if matched is not None:
            exit_class, why = matched
            return exit_class, f"the agent CLI never began a session: {why}"
        said = lines[-1].strip()[:240] if lines else "nothing on stderr"
        return (
            "infra_other",
            f"the agent CLI exited {data.exit_code} without a transcript, so no session "
            f"began: {said!r}",
        )
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


def classify(data: ClassifyInput, table: PatternTable | None = None) -> Verdict:
    """The verdict on one attempt."""
    table = table or load_table()
    facts = parse_transcript(data.transcript_format, list(data.events))
    exit_class, reason = _decide(data, facts, table)
    m = data.metered if data.metered is not None and data.metered.requests else None
    disagrees = token_note(facts.tokens, m)
    return Verdict(
        exit_class=exit_class,
        reason=reason + (f"{disagrees}, so its cost is not taken" if disagrees else ""),
        served_model=m.served_models[0] if m and m.served_models else facts.served_model,
        tokens=m.tokens if m else facts.tokens,
        metered=m,
        cost_usd=None if disagrees else facts.cost_usd,  # the CLI's own figure, if believable
        last_message=facts.last_message,
        signals=_signals(table, facts.last_message, data.files_changed, data.expects_change),
        classifier_version=table.version,
    )
