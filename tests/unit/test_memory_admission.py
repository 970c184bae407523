"""A host's memory admission: never past its memory less its reserves, as measured."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from durabench.sandbox.docker.memory_admission import (
    HeldMemory,
    MemoryBudget,
    counted_mib,
    fits,
)


def test_the_budget_of_this_lab_s_host_worked_by_hand() -> None:
    """24,105 MiB, a tenth kept (2,410.5), one verifier at its 4,096 MiB limit: 17,598.5.

    Replay sandboxes measured at 8 MiB count 8 + 128 = 136: 129 fit (17,544), not 130
    (17,680). Real CLIs, counted at their 1,024 MiB floor until they hold more: 17 fit
    (17,408), not 18 (18,432).
    """
    budget = MemoryBudget.of(24105, 2410.5, 1, 4096, 128)
    assert budget == MemoryBudget(usable_mib=17598.5, growth_mib=128)
    replay = HeldMemory(measured_mib=8, floor_mib=0)
    assert counted_mib(replay, 128) == 136
    assert fits(budget, [replay] * 128, replay) and not fits(budget, [replay] * 129, replay)
    cli = HeldMemory(measured_mib=None, floor_mib=1024)
    assert fits(budget, [cli] * 16, cli) and not fits(budget, [cli] * 17, cli)
    assert fits(MemoryBudget(usable_mib=0, growth_mib=128), [], cli)  # an empty host: one
    many = MemoryBudget.of(65536, 6553.6, 16, 4096, 128)  # 32 CPUs: 16 verifiers' room
    assert many.usable_mib == 29491.2  # capped at half of 58,982.4, not 65,536 of it
    grown = HeldMemory(measured_mib=1500, floor_mib=1024)  # past its floor: measured + growth
    assert counted_mib(grown, 128) == 1628


_MIB = st.floats(min_value=0, max_value=8192, allow_nan=False)


@given(
    host=st.floats(min_value=512, max_value=1 << 20, allow_nan=False),
    reserve=_MIB,
    verifiers=st.integers(min_value=0, max_value=8),
    limit=st.floats(min_value=64, max_value=16384, allow_nan=False),
    growth=_MIB,
    steps=st.lists(st.tuples(_MIB, st.lists(st.one_of(st.none(), _MIB), max_size=40)), max_size=40),
)
def test_never_admits_past_host_memory_less_reserves(
    host: float,
    reserve: float,
    verifiers: int,
    limit: float,
    growth: float,
    steps: list[tuple[float, list[float | None]]],
) -> None:
    """Each step measures the admitted sandboxes anew (they grow or shrink) and a newcomer
    of some floor asks: it is admitted exactly when everything counted, it included, stays
    within the host's memory less the reserve and the verifiers' room (at most half of
    what the reserve leaves); a host holding nothing admits one."""
    budget = MemoryBudget.of(host, reserve, verifiers, limit, growth)
    left = max(0.0, host - reserve)
    ceiling = left - min(verifiers * limit, left / 2)  # the verifiers' room: half at most
    admitted: list[float] = []  # floors
    for floor, readings in steps:
        held = [
            HeldMemory(readings[i] if i < len(readings) else None, f)
            for i, f in enumerate(admitted)
        ]
        counted = sum(
            max(h.floor_mib, growth)
            if h.measured_mib is None
            else max(h.measured_mib + growth, h.floor_mib)
            for h in held
        )
        newcomer = max(floor, growth)
        admit = fits(budget, held, HeldMemory(None, floor))
        if not held:  # an empty host admits one: its own memory limit caps it
            assert admit
        else:
            assert admit == (counted + newcomer <= ceiling)
            if admit:
                assert counted + newcomer <= host - reserve
        if admit:
            admitted.append(floor)
