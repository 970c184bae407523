"""An attempt's token budget holds under concurrency, on every stream shape, across restarts.

Each request reserves its worst case before it goes out; refusals are 400s the CLIs do
not retry, ledgered as ``budget``. The ledger's total passes the budget by at most one
request's worst case.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from durabench.gateway import read_ledger
from durabench.gateway.budget import Budgets, worst_case
from durabench.gateway.ledger import read_entries
from durabench.gateway.providers import ProviderName
from tests.gateway_rig import gateway_rig
from tests.model_upstream import Received, Reply, anthropic_stream

MODEL = "claude-haiku-4-5"
BUDGET = 2000


def _costly(received: Received) -> Reply:
    """500 tokens an answer, as the hostile agent's requests cost."""
    return anthropic_stream(
        MODEL, [{"type": "text", "text": "ok"}], input_tokens=20, output_tokens=480
    )


def _body(max_tokens: int, *, stream: bool = True) -> bytes:
    doc = {"model": MODEL, "max_tokens": max_tokens, "stream": stream, "messages": []}
    return json.dumps(doc).encode()


async def test_thirty_concurrent_requests_cannot_all_spend_a_budget_none_has_spent_yet(
    tmp_path: Path,
) -> None:
    async with gateway_rig(tmp_path, _costly) as rig:
        token = rig.grant(model=MODEL, budget_tokens=BUDGET)
        answers = await asyncio.gather(
            *(
                rig.send("POST", "/anthropic/v1/messages", token, content=_body(480))
                for _ in range(30)
            )
        )
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(200) < 30 and set(statuses) == {200, 400}
    refused = next(a for a in answers if a.status_code == 400)
    assert "budget of 2,000 tokens is spent" in refused.json()["error"]["message"]
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.budget_spent
    one_worst_case = 480 + len(_body(480)) // 3
    assert metered.tokens.total <= BUDGET + one_worst_case
    assert len(rig.upstream.received) == statuses.count(200)


async def test_a_chat_completions_stream_is_made_to_report_its_usage(tmp_path: Path) -> None:
    def chat(received: Received) -> Reply:
        body = received.body if isinstance(received.body, dict) else {}
        chunk = {"model": "gpt-5", "choices": [{"delta": {"content": "ok"}}]}
        events: list[dict[str, object]] = [chunk]
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": 80, "completion_tokens": 7, "total_tokens": 87}
            events.append({"model": "gpt-5", "choices": [], "usage": usage})
        return Reply(events=events, headers={"content-type": "text/event-stream"})

    async with gateway_rig(tmp_path, chat) as rig:
        token = rig.grant("openai", model="gpt-5", budget_tokens=BUDGET)
        body = {"model": "gpt-5", "stream": True, "messages": [], "stream_options": {}}
        answer = await rig.send("POST", "/openai/v1/chat/completions", token, json=body)
    assert answer.status_code == 200
    (seen,) = rig.upstream.received
    assert seen.body["stream_options"] == {"include_usage": True}
    metered = read_ledger(rig.ledger)
    assert metered is not None and (metered.tokens.input, metered.tokens.output) == (80, 7)


async def test_a_success_that_reports_no_usage_is_charged_its_whole_reservation(
    tmp_path: Path,
) -> None:
    def silent(received: Received) -> Reply:
        return Reply(body={"id": "msg", "content": []})

    async with gateway_rig(tmp_path, silent) as rig:
        token = rig.grant(model=MODEL, budget_tokens=BUDGET)
        body = _body(2500, stream=False)
        first = await rig.send("POST", "/anthropic/v1/messages", token, content=body)
        second = await rig.send("POST", "/anthropic/v1/messages", token, content=body)
    assert (first.status_code, second.status_code) == (200, 400)
    (charged, refused) = read_entries(rig.ledger)
    assert charged.charged == 2500 + len(body) // 3 and refused.refused == "budget"


def test_a_restarted_gateway_counts_what_its_ledger_says_was_spent(tmp_path: Path) -> None:
    ledger = tmp_path / "gateway.jsonl"
    line = {"at": 0, "provider": "anthropic", "path": "/v1/messages", "status": 200}
    ledger.write_text(json.dumps(line | {"charged": 1990}) + "\n" + "{cut\n")
    budgets = Budgets()
    held = budgets.reserve(str(ledger), 2000, 500)
    assert held is not None and budgets.held(str(ledger)) == (1990, 500)
    assert budgets.reserve(str(ledger), 2000, 1) is None  # spent + held reach the budget
    budgets.settle(held, 20)
    assert budgets.held(str(ledger)) == (2010, 0)
    assert Budgets().held(str(ledger)) == (1990, 0)  # the ledger, not memory, on restart


def test_the_worst_case_is_each_provider_s_output_cap_and_the_input_s_size() -> None:
    assert worst_case("anthropic", {"max_tokens": 100}, 300) == 200
    assert worst_case("openai", {"max_output_tokens": 50}, 0) == 50
    assert worst_case("openai", {"max_completion_tokens": 70}, 3) == 71
    assert worst_case("gemini", {"generationConfig": {"maxOutputTokens": 9}}, 30) == 19
    assert worst_case("openai", {}, 0) == 32_000  # no cap named: the default reserve
    assert worst_case("anthropic", {"max_tokens": True}, 0) == 32_000


async def test_a_gateway_started_anew_refuses_what_the_last_one_spent(tmp_path: Path) -> None:
    async with gateway_rig(tmp_path, _costly) as rig:
        token = rig.grant(model=MODEL, budget_tokens=BUDGET)
        for _ in range(4):  # 500 tokens each: 2,000 spent
            answer = await rig.send("POST", "/anthropic/v1/messages", token, content=_body(480))
            assert answer.status_code == 200
    async with gateway_rig(tmp_path, _costly) as again:  # a new process: memory is empty
        refused = await again.send("POST", "/anthropic/v1/messages", token, content=_body(480))
    assert refused.status_code == 400 and again.upstream.received == []


@pytest.mark.parametrize(
    ("provider", "doc"),
    [
        ("openai", {"max_tokens": 100, "n": 8}),
        ("gemini", {"generationConfig": {"maxOutputTokens": 100, "candidateCount": 8}}),
        ("gemini", {"generationConfig": {"max_output_tokens": 100, "candidate_count": 8}}),
        # The Python SDK's own spelling: the config's key in snake case too.
        ("gemini", {"generation_config": {"max_output_tokens": 100, "candidate_count": 8}}),
    ],
)
def test_the_worst_case_counts_every_answer_a_request_asks_for(
    provider: ProviderName, doc: dict[str, object]
) -> None:
    """8 answers of at most 100 tokens each, and an empty body: 8 x 100 + 0 = 800 (a cap
    not read would reserve the default 32,000 x 8)."""
    assert worst_case(provider, doc, 0) == 800


async def test_each_reservation_is_released_once(tmp_path: Path) -> None:
    """Once every answer has ended nothing is held, and spent is what was charged, once.

    A whole answer of 20 input + 480 output is charged 500; a stream cut after its
    ``message_start`` (20 input, 1 output so far) is charged its whole reservation, W =
    480 + body bytes / 3 (the API went on writing, and billing, what the host lost; charged
    only 21, the attempt could pass its budget by any number of cut answers): spent
    500 + W, held 0. A reservation settled twice (an error path and a ``finally`` both
    settling) charges its answer twice and frees another request's hold, letting an attempt
    pass its budget by several worst cases.
    """
    answers = iter([_costly, _cut])

    def script(received: Received) -> Reply:
        return next(answers)(received)

    async with gateway_rig(tmp_path, script) as rig:
        token = rig.grant(model=MODEL, budget_tokens=BUDGET)
        for _ in range(2):
            answer = await rig.send("POST", "/anthropic/v1/messages", token, content=_body(480))
            assert answer.status_code == 200
        worst = 480 + len(_body(480)) // 3
        assert rig.app.budgets.held(str(rig.ledger)) == (500 + worst, 0)
    assert [e.charged for e in read_entries(rig.ledger)] == [500, worst]


def _cut(received: Received) -> Reply:
    reply = _costly(received)
    reply.cut_after = 1  # message_start only: the answer began, and the host lost the rest
    return reply


async def test_cache_tokens_are_charged_to_the_budget(tmp_path: Path) -> None:
    """An answer of 20 input, 480 output, 300 cache-read and 200 cache-write tokens is
    charged 20 + 480 + 300 + 200 = 1,000 (input and output alone would be 500)."""

    def cached(received: Received) -> Reply:
        return anthropic_stream(
            MODEL,
            [{"type": "text", "text": "ok"}],
            input_tokens=20,
            output_tokens=480,
            cache_read=300,
            cache_write=200,
        )

    async with gateway_rig(tmp_path, cached) as rig:
        token = rig.grant(model=MODEL, budget_tokens=BUDGET)
        answer = await rig.send("POST", "/anthropic/v1/messages", token, content=_body(480))
    assert answer.status_code == 200
    (entry,) = read_entries(rig.ledger)
    assert entry.charged == 1000


WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


async def test_sixteen_requests_with_a_server_tool_cannot_all_slip_under_the_budget(
    tmp_path: Path,
) -> None:
    """max_tokens 1 with web search bills ~3,000 tokens: the worst case must say so.

    Each request's worst case counts 8 searches of 10,000 tokens (80,000 + 1 + its body /
    3), so the first one alone holds more than the 2,000-token budget and the other 15 are
    refused while it is in flight or once it is charged.
    """

    def searched(received: Received) -> Reply:
        return anthropic_stream(
            MODEL, [{"type": "text", "text": "ok"}], input_tokens=2990, output_tokens=1
        )

    doc = {"model": MODEL, "max_tokens": 1, "stream": True, "messages": [], "tools": [WEB_SEARCH]}
    async with gateway_rig(tmp_path, searched) as rig:
        token = rig.grant(model=MODEL, budget_tokens=BUDGET)
        answers = await asyncio.gather(
            *(rig.send("POST", "/anthropic/v1/messages", token, json=doc) for _ in range(16))
        )
    assert sorted(a.status_code for a in answers) == [200] + [400] * 15
    assert len(rig.upstream.received) == 1
    metered = read_ledger(rig.ledger)
    assert metered is not None and metered.tokens.total == 2991


@pytest.mark.parametrize(
    ("provider", "doc", "uses"),
    [
        ("anthropic", {"tools": [WEB_SEARCH | {"max_uses": 3}]}, 3),
        ("anthropic", {"tools": [WEB_SEARCH, {"type": "web_fetch_20250910"}]}, 16),
        ("anthropic", {"mcp_servers": [{"type": "url", "url": "https://x"}]}, 8),
        ("anthropic", {"tools": [{"name": "Bash", "input_schema": {}}]}, 0),
        ("anthropic", {"tools": [{"type": "bash_20250124", "name": "bash"}]}, 0),
        ("openai", {"tools": [{"type": "web_search"}, {"type": "function", "name": "f"}]}, 8),
        ("openai", {"tools": [{"type": "local_shell"}, {"type": "custom", "name": "x"}]}, 0),
        ("gemini", {"tools": [{"googleSearch": {}}, {"functionDeclarations": []}]}, 8),
        ("gemini", {"tools": [{"codeExecution": {}, "urlContext": {}}]}, 16),
    ],
)
def test_the_worst_case_counts_every_server_tool_use_a_request_allows(
    provider: ProviderName, doc: dict[str, object], uses: int
) -> None:
    """A use is reserved at 10,000 tokens (results the API adds to the input); 8 uses when
    the request names no ``max_uses``. Client tools (run by the CLI) cost only their text.
    """
    doc = {"max_tokens": 100, "generationConfig": {"maxOutputTokens": 100}} | doc
    assert worst_case(provider, doc, 0) == 100 + 10_000 * uses


def test_a_reservation_settled_twice_is_charged_and_released_once() -> None:
    """Two holds of 1,000 against a budget of 2,500; the first answer cost 300 and is
    settled twice (an error path and a ``finally`` both settling). Once: spent 300, held
    1,000 (the second request's hold), so a third request finds 2,500 - 1,300 left and is
    admitted. Twice would be spent 600, held 0: the second request's hold freed."""
    budgets = Budgets()
    first = budgets.reserve("a.jsonl", 2500, 1000)
    second = budgets.reserve("a.jsonl", 2500, 1000)
    assert first is not None and second is not None
    budgets.settle(first, 300)
    budgets.settle(first, 300)
    assert budgets.held("a.jsonl") == (300, 1000)
