"""A host runs at most ``max_verifiers`` verifiers at once, without timing a phase out."""

from __future__ import annotations

import asyncio

from durabench.attempt.verify_slots import VerifySlots


async def test_a_verifier_waits_for_a_free_slot() -> None:
    slots = VerifySlots(1)
    events: list[str] = []
    first_in = asyncio.Event()
    let_go = asyncio.Event()

    async def first() -> None:
        async with slots.slot(wait_at_most=60) as within:
            events.append(f"first in {within}")
            first_in.set()
            await let_go.wait()
            events.append("first out")

    async def second() -> None:
        await first_in.wait()
        async with slots.slot(wait_at_most=60) as within:
            events.append(f"second in {within}")

    tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
    await first_in.wait()
    for _ in range(20):  # give the second every chance to get in early
        await asyncio.sleep(0)
    assert (slots.running, slots.waiting) == (1, 1)
    let_go.set()
    await asyncio.gather(*tasks)
    assert events == ["first in True", "first out", "second in True"]
    assert (slots.running, slots.waiting) == (0, 0)


async def test_a_verifier_runs_over_the_limit_rather_than_time_its_phase_out() -> None:
    slots = VerifySlots(1)
    async with slots.slot(wait_at_most=60):
        async with slots.slot(wait_at_most=0) as within:
            assert not within  # no slot came in time: it runs anyway, and says so
            assert slots.running == 2
    assert slots.running == 0
