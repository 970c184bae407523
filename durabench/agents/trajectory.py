"""An attempt's transcript as an ATIF trajectory, so people and Harbor's tools can read it.

The steps come from the dialect's reader (:mod:`durabench.agents.trajectory_steps`), the
totals and the served model from the dialect's parser, the same facts the classifier used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from durabench.agents.atif import AtifAgent, FinalMetrics, Step, Trajectory
from durabench.agents.claude_transcript import parse_claude
from durabench.agents.cli_version import transcript_version
from durabench.agents.codex_transcript import parse_codex
from durabench.agents.gemini_transcript import parse_gemini
from durabench.agents.trajectory_steps import claude_steps, codex_steps, gemini_steps
from durabench.agents.transcript import TranscriptFacts
from durabench.models.verdict import TranscriptFormat

__all__ = ["trajectory_of"]

_DIALECTS: dict[
    str,
    tuple[
        Callable[[Iterable[dict[str, Any]]], list[Step]],
        Callable[[Iterable[dict[str, Any]]], TranscriptFacts],
    ],
] = {
    "claude-code": (claude_steps, parse_claude),
    "codex-cli": (codex_steps, parse_codex),
    "gemini-cli": (gemini_steps, parse_gemini),
}

MAX_EVENTS = 20_000
"""Events read into steps: a real session has a few thousand; a flood is cut here (its
facts are still read whole, as a stream)."""
_NOTES = (
    "Written by durabench from the agent CLI's transcript. Tokens and cost are the CLI's own "
    "figures; the scored ones come from the model gateway (result.json)."
)


def _session(events: Iterable[dict[str, Any]]) -> str | None:
    for event in islice(events, MAX_EVENTS):
        for key in ("session_id", "thread_id"):
            if isinstance(event.get(key), str) and event[key]:
                return str(event[key])
    return None


def trajectory_of(
    fmt: TranscriptFormat | None,
    events: Iterable[dict[str, Any]],
    *,
    agent: str,
    model: str,
    attempt_id: str,
    instruction: str = "",
    version: str | None = None,
) -> Trajectory | None:
    """The trajectory of a transcript in dialect ``fmt``; ``None`` for no transcript.

    ``events`` is read several times, one event at a time: a list, or an
    :class:`~durabench.agents.transcript.EventFile` that reads its file again each time,
    so a transcript at its size cap is never held whole. Steps come from its first
    :data:`MAX_EVENTS` events. ``instruction`` (the task as the agent got it) opens the
    steps when the transcript does not say it; ``attempt_id`` names the session when the
    transcript names none.
    """
    if fmt is None or next(iter(events), None) is None:
        return None
    read_steps, parse = _DIALECTS[fmt]
    steps, facts = read_steps(islice(events, MAX_EVENTS)), parse(events)
    if instruction and not (steps and steps[0].source == "user"):
        steps.insert(0, Step(step_id=1, source="user", message=instruction))
    if not steps:
        return None
    for number, step in enumerate(steps, start=1):
        step.step_id = number
    tokens = facts.tokens
    return Trajectory(
        session_id=_session(events) or attempt_id,
        agent=AtifAgent(
            name=agent,
            version=transcript_version(events) or version or "unknown",
            model_name=facts.served_model or model or None,
        ),
        steps=steps,
        final_metrics=FinalMetrics(
            total_prompt_tokens=tokens.input + tokens.cache_read + tokens.cache_write,
            total_completion_tokens=tokens.output,
            total_cached_tokens=tokens.cache_read,
            total_cost_usd=facts.cost_usd,
            total_steps=len(steps),
        ),
        notes=_NOTES,
        extra={"durabench_attempt": attempt_id, "transcript_format": fmt},
    )
