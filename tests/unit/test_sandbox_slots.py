"""The deployment's sandbox slots: never more held than the limit, whatever the order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from durabench.models.sandbox_slots import GiveBackSlot, SlotHolder, SlotsState, TakeSlot
from durabench.sandbox.slots import SandboxSlots

_KEYS = st.sampled_from([f"run/t{i}/baseline/1" for i in range(8)])
_HOSTS = st.sampled_from(["a", "b", "c"])
_OPS = st.lists(
    st.tuples(st.sampled_from(["take", "give_back", "expire"]), _KEYS, _HOSTS), max_size=60
)


def _holder(key: str, host: str) -> SlotHolder:
    return SlotHolder(key=key, host=host, workflow_id=f"wf/{key}", run_id="r")


@given(limit=st.integers(min_value=1, max_value=5), ops=_OPS)
def test_never_more_held_than_the_limit(limit: int, ops: list[tuple[str, str, str]]) -> None:
    """Takes, give-backs from any host and expiries in any order hold at most ``limit``.

    A take is granted exactly when its attempt holds a slot already or fewer than the
    limit are held; a give-back frees the slot only from the host that holds it.
    """
    slots = SandboxSlots(SlotsState())
    for op, key, host in ops:
        before = dict(slots.state.holders)
        if op == "take":
            answer = slots.take(TakeSlot(holder=_holder(key, host), limit=limit))
            assert answer.granted == (key in before or len(before) < limit)
            assert answer.already == (key in before)
            assert (slots.state.holders.get(key) == _holder(key, host)) == answer.granted
        elif op == "give_back":
            ended = slots.give_back(GiveBackSlot(key=key, host=host))
            held_here = key in before and before[key].host == host
            assert (ended is not None) == held_here
            assert (key in slots.state.holders) == (key in before and not held_here)
        else:
            slots.expire([(f"wf/{key}", "r")])
            assert key not in slots.state.holders
        assert slots.held <= limit


def test_a_moved_attempt_keeps_its_slot_from_the_lost_host() -> None:
    """Claimed again on host b after host a was lost: a's late removal frees nothing."""
    slots = SandboxSlots(SlotsState())
    assert slots.take(TakeSlot(holder=_holder("k", "a"), limit=1)).granted
    assert slots.take(TakeSlot(holder=_holder("k", "b"), limit=1)).granted
    assert slots.give_back(GiveBackSlot(key="k", host="a")) is None
    assert not slots.take(TakeSlot(holder=_holder("other", "a"), limit=1)).granted
    assert slots.give_back(GiveBackSlot(key="k", host="b")) is not None
    assert slots.take(TakeSlot(holder=_holder("other", "a"), limit=1)).granted
