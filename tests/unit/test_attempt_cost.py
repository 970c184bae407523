"""An attempt's cost is its metered tokens at the run's prices, whatever the CLI printed.

A scripted model API answers through the real gateway with known usage, in each shape
the meter reads (Anthropic's stream and message, OpenAI's Responses stream and chat
completion, Gemini's event stream and JSON array); the attempt's ``cost_usd`` must be the
figure worked by hand below from the providers' published prices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from durabench.classify import classify
from durabench.gateway import read_ledger
from durabench.models.prices import Price, PriceTable
from durabench.models.verdict import ClassifyInput, MeteredUsage, ModelTokens, TokenUsage
from durabench.prices import builtin_table
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream, gemini_stream, openai_stream


def _anthropic(received: Received) -> Reply:
    if received.body.get("stream"):
        return anthropic_stream(
            "claude-haiku-4-5",
            [{"type": "text", "text": "ok"}],
            input_tokens=2_000,
            output_tokens=400,
            cache_read=30_000,
            cache_write=8_000,
        )
    usage = {
        "input_tokens": 1_000,
        "output_tokens": 200,
        "cache_read_input_tokens": 50_000,
        "cache_creation_input_tokens": 0,
    }
    return Reply(body={"type": "message", "model": "claude-haiku-4-5", "usage": usage})


def _openai(received: Received) -> Reply:
    if received.path == "/v1/responses":
        return openai_stream(
            "gpt-5-codex", "ok", input_tokens=10_000, cached=8_000, output_tokens=1_000
        )
    usage = {"prompt_tokens": 4_000, "completion_tokens": 500, "total_tokens": 4_500}
    return Reply(body={"object": "chat.completion", "model": "gpt-5-codex", "usage": usage})


def _gemini(received: Received) -> Reply:
    if "alt=sse" in received.path:
        return gemini_stream(
            "gemini-2.5-pro", "ok", prompt=20_000, cached=16_000, output_tokens=300
        )
    usage = {"promptTokenCount": 8_000, "candidatesTokenCount": 100, "thoughtsTokenCount": 900}
    chunk = {
        "candidates": [{"content": {"parts": [{"text": "ok"}]}, "finishReason": "STOP"}],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-pro",
    }
    return Reply(body=[chunk])


_GEMINI = "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent"
CASES: dict[str, tuple[Any, str, list[tuple[str, dict[str, Any]]], float]] = {
    # Haiku 4.5: $1 in, $5 out, $0.10 cache read, $1.25 cache write per million.
    # Stream: 2,000 in 0.002 + 400 out 0.002 + 30,000 read 0.003 + 8,000 write 0.010 = 0.017;
    # message: 1,000 in 0.001 + 200 out 0.001 + 50,000 read 0.005 = 0.007. In all 0.024.
    "anthropic": (
        _anthropic,
        "claude-haiku-4-5",
        [
            ("/anthropic/v1/messages", {"model": "claude-haiku-4-5", "stream": True}),
            ("/anthropic/v1/messages", {"model": "claude-haiku-4-5"}),
        ],
        0.024,
    ),
    # gpt-5-codex: $1.25 in, $0.125 cached, $10 out per million.
    # Responses stream: 2,000 uncached in 0.0025 + 8,000 cached 0.001 + 1,000 out 0.01
    # = 0.0135; chat completion: 4,000 in 0.005 + 500 out 0.005 = 0.01. In all 0.0235.
    "openai": (
        _openai,
        "gpt-5-codex",
        [
            ("/openai/v1/responses", {"model": "gpt-5-codex", "stream": True}),
            ("/openai/v1/chat/completions", {"model": "gpt-5-codex"}),
        ],
        0.0235,
    ),
    # gemini-2.5-pro: $1.25 in, $0.125 cached, $10 out (thinking included) per million.
    # Event stream: 4,000 uncached in 0.005 + 16,000 cached 0.002 + 300 out 0.003 = 0.01;
    # JSON array: 8,000 in 0.01 + 100 + 900 thinking out 0.01 = 0.02. In all 0.03.
    "gemini": (
        _gemini,
        "gemini-2.5-pro",
        [(f"{_GEMINI}?alt=sse", {"contents": []}), (_GEMINI, {"contents": []})],
        0.03,
    ),
}


async def _metered(
    tmp_path: Path, provider: str, script: Any, model: str, requests: list[Any]
) -> MeteredUsage:
    async with gateway_rig(tmp_path, script) as rig:
        token = rig.grant(provider, model=model)
        for path, body in requests:
            if provider == "gemini":
                path += ("&" if "?" in path else "?") + f"key={token}"
            answer = await rig.send("POST", path, token, json=body)
            assert answer.status_code == 200, answer.text
        metered = read_ledger(rig.ledger)
    assert metered is not None
    return metered


def _verdict(metered: MeteredUsage, model: str, prices: PriceTable, **fields: Any) -> Any:
    return classify(
        ClassifyInput(
            requested_model=model,
            files_changed=1,
            metered=metered,
            model_via_gateway=True,
            prices=prices,
            **fields,
        )
    )


@pytest.mark.parametrize("provider", list(CASES))
async def test_each_answers_metered_tokens_cost_what_the_table_says(
    tmp_path: Path, provider: str
) -> None:
    script, model, requests, usd = CASES[provider]
    metered = await _metered(tmp_path, provider, script, model, requests)
    verdict = _verdict(metered, model, builtin_table().only(provider, model))
    assert verdict.cost_usd == pytest.approx(usd, rel=1e-9)
    assert verdict.unpriced_model == ""


async def test_every_token_kind_is_priced_at_its_own_rate(tmp_path: Path) -> None:
    """A price of 1, 10, 100 and 1,000 dollars a million tells each kind apart."""
    script, model, requests, _ = CASES["anthropic"]
    metered = await _metered(tmp_path, "anthropic", script, model, requests)
    apart = Price(
        input=1.0,
        output=10.0,
        cache_read=100.0,
        cache_write=1_000.0,
        source="t",
        as_of="2026-01-01",
    )
    prices = PriceTable(prices={"anthropic": {model: apart}})
    # in 3,000 at $1 = 0.003; out 600 at $10 = 0.006; read 80,000 at $100 = 8.0;
    # write 8,000 at $1,000 = 8.0: 16.009
    assert _verdict(metered, model, prices).cost_usd == pytest.approx(16.009, rel=1e-9)


async def test_an_unpriced_model_costs_none_never_zero(tmp_path: Path) -> None:
    script, model, requests, _ = CASES["anthropic"]
    metered = await _metered(tmp_path, "anthropic", script, model, requests)
    verdict = _verdict(metered, model, PriceTable())
    assert (verdict.cost_usd, verdict.unpriced_model) == (None, model)
    no_traffic = _verdict(MeteredUsage(), model, PriceTable())  # no request, still no price
    assert (no_traffic.cost_usd, no_traffic.unpriced_model) == (None, model)


def test_one_unpriced_model_among_priced_ones_leaves_the_cost_unknown() -> None:
    used = (
        ModelTokens(provider="anthropic", model="claude-haiku-4-5", tokens=TokenUsage(input=9)),
        ModelTokens(provider="anthropic", model="claude-next", tokens=TokenUsage(output=1)),
        ModelTokens(provider="anthropic", model="claude-free", tokens=TokenUsage()),
    )
    metered = MeteredUsage(requests=3, by_model=used)
    prices = builtin_table().only("anthropic", "claude-haiku-4-5")
    verdict = _verdict(metered, "claude-haiku-4-5", prices)
    assert (verdict.cost_usd, verdict.unpriced_model) == (None, "claude-next")


def test_a_priced_attempt_with_no_traffic_cost_nothing() -> None:
    prices = builtin_table().only("anthropic", "claude-haiku-4-5")
    assert _verdict(MeteredUsage(), "claude-haiku-4-5", prices).cost_usd == 0.0


INIT = {"type": "system", "subtype": "init", "model": "claude-haiku-4-5"}


def _claims(cost: float) -> tuple[dict[str, object], ...]:
    result = {
        "type": "result",
        "subtype": "success",
        "result": "Done.",
        "total_cost_usd": cost,
        "usage": {"input_tokens": 1_000_000, "output_tokens": 0},
    }
    return (INIT, result)


@pytest.mark.parametrize(
    ("cli", "named"),
    [
        (1.00, False),  # the meter's own figure
        (1.04, False),  # within 5%
        (1.10, True),  # 10% more: named
        (0.10, True),  # a tenth: named
    ],
)
def test_the_clis_own_cost_is_kept_beside_and_a_difference_is_named(
    cli: float, named: bool
) -> None:
    used = ModelTokens(
        provider="anthropic", model="claude-haiku-4-5", tokens=TokenUsage(input=1_000_000)
    )
    metered = MeteredUsage(requests=1, tokens=used.tokens, by_model=(used,), last_status=200)
    prices = builtin_table().only("anthropic", "claude-haiku-4-5")
    verdict = _verdict(
        metered,
        "claude-haiku-4-5",
        prices,
        events=_claims(cli),
        transcript_format="claude-code",
    )
    assert verdict.cost_usd == pytest.approx(1.00)  # a million input tokens at $1
    assert verdict.cli_cost_usd == cli
    assert ("the CLI reports a cost of" in verdict.reason) is named


def test_without_a_gateway_the_clis_figure_is_all_there_is() -> None:
    data = ClassifyInput(
        events=_claims(0.5),
        transcript_format="claude-code",
        requested_model="claude-haiku-4-5",
        files_changed=1,
    )
    verdict = classify(data)
    assert (verdict.cost_usd, verdict.cli_cost_usd) == (0.5, 0.5)


async def test_a_billed_answer_that_reported_no_usage_is_said_not_priced_as_nothing(
    tmp_path: Path,
) -> None:
    """A chat stream without ``stream_options.include_usage`` reports no usage: the API
    bills it, the meter cannot count it. The cost holds what was metered and says so."""

    def script(received: Received) -> Reply:
        if received.body.get("stream"):  # no usage chunk
            chunk = {"id": "c", "model": "gpt-5-codex", "choices": [{"finish_reason": "stop"}]}
            return Reply(events=[chunk], headers={"content-type": "text/event-stream"})
        return _openai(received)

    requests = [
        ("/openai/v1/chat/completions", {"model": "gpt-5-codex", "stream": True}),
        ("/openai/v1/chat/completions", {"model": "gpt-5-codex"}),
    ]
    metered = await _metered(tmp_path, "openai", script, "gpt-5-codex", requests)
    assert metered.unmetered == 1
    verdict = _verdict(metered, "gpt-5-codex", builtin_table().only("openai", "gpt-5-codex"))
    assert verdict.cost_usd == pytest.approx(0.01)  # the chat completion's, worked above
    assert "1 answer(s) the API bills reported no usage" in verdict.reason
