"""A grading service cannot hang or exhaust a worker: a deadline per request, a size cap.

Against the real loopback service of ``tests/service_server.py``, misbehaving on purpose:
one that drips its answer a byte at a time (every read is quick, so a per-read timeout
never fires), and one that answers with an endless body.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from durabench.errors import NON_RETRYABLE, ServiceError, ServiceProtocolError
from durabench.models.benchmark_service import ServiceRetry
from durabench.service.auth import ServiceAuth
from durabench.service.client import ServiceClient
from durabench.service.wire import EvaluateResponseRequest
from tests.service_server import ServiceServer

REQUEST = EvaluateResponseRequest(task_id="t1", response="42")


async def _no_sleep(seconds: float) -> None:
    return None


@pytest.fixture
def service() -> Iterator[ServiceServer]:
    with ServiceServer({"t1": "42"}) as server:
        yield server


def _client(url: str, *, timeout_s: float = 10, cap: int | None = None) -> ServiceClient:
    retry = ServiceRetry(max_attempts=1, timeout_s=timeout_s)
    extra = {} if cap is None else {"max_response_bytes": cap}
    return ServiceClient(url, ServiceAuth("none"), retry=retry, sleep=_no_sleep, **extra)


async def test_an_answer_dripped_a_byte_at_a_time_meets_the_request_deadline(
    service: ServiceServer,
) -> None:
    """Each byte arrives well within the read timeout; the whole answer never would."""
    service.faults.drip_s = 0.4  # ~60 bytes: ~24 s for the whole answer
    async with _client(service.url, timeout_s=1) as client:
        with pytest.raises(ServiceError, match=r"no complete answer within 1 s") as err:
            await client.evaluate_response(REQUEST)
    assert type(err.value) is ServiceError  # transient: Temporal tries the activity again
    assert service.sent_bytes < 40  # the client stopped reading; it did not wait it out


async def test_an_endless_answer_is_cut_at_the_size_cap(service: ServiceServer) -> None:
    """The body is streamed and dropped at the cap: never held whole in memory."""
    flood = 256 << 20
    service.faults.flood_bytes = flood
    async with _client(service.url, cap=1 << 20) as client:
        with pytest.raises(ServiceProtocolError, match=r"larger than 1,048,576 bytes") as err:
            await client.evaluate_response(REQUEST)
    assert type(err.value) in NON_RETRYABLE
    assert service.sent_bytes < flood // 4


async def test_an_answer_within_the_limits_is_read(service: ServiceServer) -> None:
    async with _client(service.url, timeout_s=5, cap=4096) as client:
        answer = await client.evaluate_response(REQUEST)
    assert answer.pass_percentage == 100.0
