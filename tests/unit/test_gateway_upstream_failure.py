"""Which failures to reach the API are the host's: only those the agent cannot provoke.

A connection refused or never made is the host's (or the API's) trouble. A read that
timed out is not: an agent can ask for a long answer, unstreamed, and wait it out.
"""

from __future__ import annotations

import httpx
import pytest

from durabench.gateway.exchange import upstream_failure


@pytest.mark.parametrize(
    ("exc", "refused"),
    [
        (httpx.ConnectError("refused"), "upstream unreachable"),
        (httpx.ConnectTimeout("slow"), "upstream unreachable"),
        (httpx.RemoteProtocolError("closed"), "upstream unreachable"),
        (httpx.ReadTimeout("long"), "upstream timeout"),
        (httpx.WriteTimeout("long"), "upstream timeout"),
    ],
)
def test_a_failure_is_the_hosts_only_when_the_agent_cannot_cause_it(
    exc: httpx.HTTPError, refused: str
) -> None:
    assert upstream_failure(exc) == refused
