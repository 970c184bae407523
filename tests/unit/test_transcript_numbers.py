"""Every number read from a transcript is optional, finite and non-negative; none raises.

A transcript is the agent's text. The examples are the attacks seen (a cost of -1000,
tokens of ``"lots"``); the property runs every dialect's parser, and the trajectory
built from it, over arbitrary events shaped like each dialect's.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from durabench.agents.dialects import PARSERS, parse_transcript
from durabench.agents.trajectory import trajectory_of
from durabench.agents.transcript import TranscriptFacts
from durabench.classify import classify
from durabench.models.verdict import ClassifyInput, MeteredUsage, TokenUsage

MODEL = "claude-haiku-4-5"
INIT = {"type": "system", "subtype": "init", "model": MODEL}


def test_a_negative_cost_with_no_tokens_is_no_cost() -> None:
    facts = parse_transcript("claude-code", [INIT, {"type": "result", "total_cost_usd": -1000}])
    assert facts.cost_usd is None
    assert facts.tokens == TokenUsage()


def test_tokens_of_lots_are_no_tokens_and_raise_nothing() -> None:
    usage = {"input_tokens": "lots", "output_tokens": 7, "cache_read_input_tokens": -5}
    facts = parse_transcript("claude-code", [INIT, {"type": "result", "usage": usage}])
    assert facts.tokens == TokenUsage(output=7)
    codex = {"type": "turn.completed", "usage": {"input_tokens": "lots", "output_tokens": 1e999}}
    assert parse_transcript("codex-cli", [codex]).tokens == TokenUsage()
    gemini = {"type": "result", "stats": {"input": -3, "cached": "x", "output_tokens": 4.0}}
    assert parse_transcript("gemini-cli", [gemini]).tokens == TokenUsage(output=4)


def test_a_cost_beside_no_tokens_is_not_taken_when_the_gateway_metered_some() -> None:
    """0 tokens said is no agreement with the meter: the cost beside them is unchecked."""
    metered = MeteredUsage(
        requests=2,
        tokens=TokenUsage(input=900, output=300),
        served_models=(MODEL,),
        asked_models=(MODEL,),
        last_status=200,
    )
    events = (INIT, {"type": "result", "subtype": "success", "result": "ok", "total_cost_usd": 9})
    data = ClassifyInput(
        events=events,
        transcript_format="claude-code",
        requested_model=MODEL,
        files_changed=1,
        metered=metered,
    )
    verdict = classify(data)
    assert verdict.cost_usd is None
    assert verdict.tokens == TokenUsage(input=900, output=300)


_NUMBERISH = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cached_input_tokens",
    "inputTokens",
    "outputTokens",
    "cacheReadInputTokens",
    "cacheCreationInputTokens",
    "costUSD",
    "cached",
    "input",
)
_USAGE = st.dictionaries(st.sampled_from(_USAGE_KEYS), _NUMBERISH, max_size=6)
_JSON = st.recursive(
    st.none() | st.booleans() | _NUMBERISH | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_TYPES = (
    "system",
    "assistant",
    "user",
    "result",
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.completed",
)
_EVENT = st.fixed_dictionaries(
    {"type": st.sampled_from(_TYPES)},
    optional={
        "subtype": st.sampled_from(("init", "api_retry", "success", "error_max_turns")) | _JSON,
        "model": _JSON,
        "usage": _USAGE | _JSON,
        "stats": _USAGE | _JSON,
        "modelUsage": st.dictionaries(st.text(max_size=4), _USAGE | _JSON, max_size=2) | _JSON,
        "total_cost_usd": _NUMBERISH,
        "message": st.fixed_dictionaries(
            {}, optional={"usage": _USAGE, "content": _JSON, "id": _JSON, "model": _JSON}
        )
        | _JSON,
        "item": _JSON,
        "result": _JSON,
        "is_error": _JSON,
        "error": _JSON,
        "content": _JSON,
        "role": st.sampled_from(("assistant", "user")) | _JSON,
        "delta": _JSON,
        "timestamp": _JSON,
        "session_id": _JSON,
        "mcp_servers": _JSON,
        "status": _JSON,
    },
)


def _sound(facts: TranscriptFacts) -> None:
    for name, value in facts.tokens:
        assert isinstance(value, int) and 0 <= value, (name, value)
    cost = facts.cost_usd
    assert cost is None or (math.isfinite(cost) and cost >= 0), cost


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dialect=st.sampled_from(sorted(PARSERS)), events=st.lists(_EVENT, max_size=8))
def test_any_events_parse_without_raising_into_sound_numbers(
    dialect: str, events: list[dict[str, Any]]
) -> None:
    _sound(parse_transcript(dialect, events))  # type: ignore[arg-type]
    trajectory = trajectory_of(
        dialect,  # type: ignore[arg-type]
        events,
        agent=dialect,
        model=MODEL,
        attempt_id="a-1",
        instruction="do it",
    )
    if trajectory is None or trajectory.final_metrics is None:
        return
    metrics = trajectory.final_metrics.model_dump()
    for name, value in metrics.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            assert math.isfinite(value) and value >= 0, (name, value)
    for step in trajectory.steps:
        if step.metrics is not None:
            for name, value in step.metrics.model_dump().items():
                if isinstance(value, int | float):
                    assert math.isfinite(value) and value >= 0, (name, value)
