"""Each attempt's requests go out on its own connections; a spoiled pool is never reused.

An answer left on a connection shared between attempts would be read by the next request
on it, another lane's. So the clients are per attempt, and one that saw anything unusual
is let go at once (the attempt's next request gets a new one) and closed when its last
request ends.
"""

from __future__ import annotations

import httpx

from durabench.gateway.upstream import UpstreamClients


def _clients(idle_kept: int = 64) -> tuple[UpstreamClients, list[httpx.AsyncClient]]:
    made: list[httpx.AsyncClient] = []

    def make() -> httpx.AsyncClient:
        made.append(httpx.AsyncClient())
        return made[-1]

    return UpstreamClients(make, idle_kept), made


async def test_two_attempts_never_share_a_client_and_one_attempt_keeps_its_own() -> None:
    clients, made = _clients()
    async with clients.client("a") as a1, clients.client("b") as b:
        assert a1 is not b
    async with clients.client("a") as a2:
        assert a2 is a1
    assert len(made) == 2
    await clients.aclose()
    assert all(c.is_closed for c in made)


async def test_a_spoiled_client_is_let_go_at_once_and_closed_when_its_last_request_ends() -> None:
    clients, made = _clients()
    async with clients.client("a") as first:
        async with clients.client("a") as same:
            assert same is first
            await clients.spoil("a")
            async with clients.client("a") as fresh:  # the attempt's next request
                assert fresh is not first
            assert not first.is_closed  # still in use by two requests
        assert not first.is_closed
    assert first.is_closed and clients.open_for("a")  # the fresh one stays for the next
    async with clients.client("a") as again:
        assert again is made[1]
    await clients.aclose()


async def test_idle_clients_past_the_kept_number_are_closed_oldest_first() -> None:
    clients, made = _clients(idle_kept=2)
    for name in ("a", "b", "c"):
        async with clients.client(name):
            pass
    assert [c.is_closed for c in made] == [True, False, False]
    assert not clients.open_for("a") and clients.open_for("c")
    await clients.aclose()
