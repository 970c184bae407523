"""Known rate limits of the models in :data:`~durabench.agents.llm_ids.KNOWN_MODELS`.

The plan turns them into agent sessions at once when nobody says ``--parallel``
(:mod:`durabench.planning.parallelism`). They are the providers' published limits at one
usage tier (Anthropic's tier 4, OpenAI's tier 4, Gemini's tier 1) for one organization;
a team's own differ by tier and contract, so ``DURABENCH_MODEL_RATE_LIMITS`` replaces
any of them, or adds models (JSON: ``{"claude-sonnet-4-5": {"rpm": 50, "tpm": 30000}}``).
A number here only proposes a default: a run told ``--parallel`` runs what it is told.
"""

from __future__ import annotations

from collections.abc import Mapping

from durabench.agents.llm_ids import served_model_matches
from durabench.models.parallelism import ModelRateLimit

__all__ = ["KNOWN_RATE_LIMITS", "rate_limit_of"]


def _limit(rpm: int, tpm: int) -> ModelRateLimit:
    return ModelRateLimit(rpm=rpm, tpm=tpm)


_ANTHROPIC_4 = _limit(4_000, 2_000_000)
_OPENAI_4 = _limit(10_000, 4_000_000)
_OPENAI_4_SMALL = _limit(10_000, 10_000_000)

KNOWN_RATE_LIMITS: Mapping[str, ModelRateLimit] = {
    "claude-opus-4-5": _ANTHROPIC_4,
    "claude-opus-4-1": _ANTHROPIC_4,
    "claude-opus-4-0": _ANTHROPIC_4,
    "claude-sonnet-4-5": _ANTHROPIC_4,
    "claude-sonnet-4-0": _ANTHROPIC_4,
    "claude-haiku-4-5": _limit(4_000, 4_000_000),
    "claude-3-7-sonnet-latest": _limit(4_000, 200_000),
    "claude-3-5-haiku-latest": _limit(4_000, 400_000),
    "gpt-5": _OPENAI_4,
    "gpt-5-codex": _OPENAI_4,
    "gpt-5.1": _OPENAI_4,
    "gpt-5.1-codex": _OPENAI_4,
    "gpt-5.1-codex-max": _OPENAI_4,
    "gpt-5-mini": _OPENAI_4_SMALL,
    "gpt-5-codex-mini": _OPENAI_4_SMALL,
    "gpt-5.1-codex-mini": _OPENAI_4_SMALL,
    "gpt-5-nano": _OPENAI_4_SMALL,
    "gpt-4.1": _limit(10_000, 2_000_000),
    "o3": _limit(10_000, 2_000_000),
    "o4-mini": _OPENAI_4_SMALL,
    "gemini-2.5-pro": _limit(150, 2_000_000),
    "gemini-2.5-flash": _limit(1_000, 1_000_000),
    "gemini-2.5-flash-lite": _limit(4_000, 4_000_000),
}
"""Requests and input tokens per minute, by model id (a dated snapshot is its model)."""


def rate_limit_of(
    model: str, overrides: Mapping[str, ModelRateLimit] | None = None
) -> ModelRateLimit | None:
    """``model``'s rate limits: the team's (``overrides``) first, then the known ones.

    ``None`` when neither names it (nor the model it is a dated snapshot of).
    """
    for table in (overrides or {}, KNOWN_RATE_LIMITS):
        if model in table:
            return table[model]
        found = next((limit for k, limit in table.items() if served_model_matches(k, model)), None)
        if found is not None:
            return found
    return None
