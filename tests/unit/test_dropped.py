"""``being_dropped``: the worker letting go, told apart from a workflow's own end."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.worker import _workflow_instance

from workflows.dropped import EVICTED, being_dropped


def _seen_in_finally(err: BaseException | None) -> bool:
    seen = None
    try:
        try:
            if err is not None:
                raise err
        finally:
            seen = being_dropped()
    except BaseException:  # noqa: BLE001 - the error is what the test raised
        pass
    if seen is None:
        raise AssertionError("the finally did not run")
    return seen


def test_the_sdk_still_raises_its_eviction_error_by_the_name_matched() -> None:
    evicted = getattr(_workflow_instance, EVICTED)
    assert issubclass(evicted, BaseException) and not issubclass(evicted, Exception)


@pytest.mark.parametrize("err", [GeneratorExit(), getattr(_workflow_instance, EVICTED)("evicting")])
def test_teardown_by_the_worker_is_dropped(err: BaseException) -> None:
    assert _seen_in_finally(err)


@pytest.mark.parametrize("err", [None, asyncio.CancelledError(), RuntimeError("a failure")])
def test_an_end_cancel_or_failure_is_the_workflows_own(err: BaseException | None) -> None:
    assert not _seen_in_finally(err)


def test_a_coroutine_closed_by_the_collector_skips_its_cleanup() -> None:
    cleaned: list[str] = []

    async def attempt(gate: asyncio.Future[None]) -> None:
        try:
            await gate
        finally:
            if not being_dropped():
                cleaned.append("finish_sandbox")

    loop = asyncio.new_event_loop()
    try:
        coro = attempt(loop.create_future())
        coro.send(None)  # suspended at the gate, as a workflow a stopped worker left
        coro.close()  # what the garbage collector does to it
    finally:
        loop.close()
    assert cleaned == []
