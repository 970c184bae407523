"""The accounts file and the pool's rules: leases, health, cooldowns, expiry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from durabench.accounts import Pool, account_env, account_secrets, load_accounts, pool_accounts
from durabench.errors import AccountError
from durabench.models.accounts import LeaseRequest, PoolAccount, PoolState, ReleaseRequest

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def _req(holder: str = "run/r/task/t", agent: str = "claude-code") -> LeaseRequest:
    return LeaseRequest(agent=agent, holder_workflow_id=holder, holder_run_id="x", label=holder)


def _pool(*accounts: PoolAccount) -> Pool:
    return Pool(PoolState(accounts=accounts))


def _acct(id: str, slots: int = 1, **kw: object) -> PoolAccount:
    return PoolAccount(id=id, agent="claude-code", slots=slots, **kw)  # type: ignore[arg-type]


def test_accounts_file_names_where_secrets_are(tmp_path: Path) -> None:
    secret_file = tmp_path / "b.token"
    secret_file.write_text("file-secret-value\n")
    path = tmp_path / "accounts.toml"
    path.write_text(
        '[[account]]\nid = "a"\nagent = "claude-code"\nsecret_env = "A_KEY"\nslots = 2\n'
        f'[[account]]\nid = "b"\nagent = "claude-code"\nsecret_file = "{secret_file}"\n'
        'env = "CLAUDE_CODE_OAUTH_TOKEN"\ntoken_expires_at = 2026-12-01T00:00:00Z\n'
    )
    accounts = load_accounts(path)
    assert accounts is not None
    a, b = accounts.account
    assert (a.slots, b.slots) == (2, 4)
    assert account_env(a, {"A_KEY": "env-secret-value"}) == {
        "ANTHROPIC_API_KEY": "env-secret-value"
    }
    assert account_env(b, {}) == {"CLAUDE_CODE_OAUTH_TOKEN": "file-secret-value"}
    assert set(account_secrets(accounts, {"A_KEY": "env-secret-value"})) == {
        "env-secret-value",
        "file-secret-value",
    }
    synced = pool_accounts(accounts, {})
    assert "A_KEY" in synced[0].blocked and synced[1].blocked == ""
    assert "value" not in synced[0].model_dump_json() + synced[1].model_dump_json()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[account]]\nid = "a"\nagent = "claude-code"\n', "exactly one of secret_env"),
        ('[[account]]\nid = "a b"\nagent = "claude-code"\nsecret_env = "K"\n', "account.0.id"),
        ('[[account]]\nid = "a"\nagent = "nope"\nsecret_env = "K"\n', "unknown agent 'nope'"),
        ('[[account]]\nid = "a"\nagent = "oracle"\nsecret_env = "K"\n', "set `env`"),
        ("[[account]\n", "not valid TOML"),
        ('[[account]]\nid = "a"\nagent = "claude-code"\nsecret_env = "K"\nslots = 0\n', "slots"),
        (
            '[[account]]\nid = "a"\nagent = "claude-code"\nsecret_env = "sk-pasted-value"\n',
            "account.0.secret_env",
        ),
    ],
)
def test_a_bad_accounts_file_says_what_is_wrong(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "accounts.toml"
    path.write_text(text)
    with pytest.raises(AccountError, match="accounts.toml") as err:
        load_accounts(path)
    assert expected in str(err.value)
    assert "pasted" not in str(err.value)  # a value given as a name is never echoed


def test_no_accounts_file_means_no_pool(tmp_path: Path) -> None:
    assert load_accounts(tmp_path / "accounts.toml") is None


def test_leases_never_exceed_slots_and_spread_over_accounts() -> None:
    pool = _pool(_acct("a", slots=2), _acct("b", slots=1))
    grants = [pool.grant(_req(f"h{i}"), f"l{i}", NOW) for i in range(4)]
    taken = [g.lease.account_id for g in grants if g.lease]
    assert sorted(taken) == ["a", "a", "b"]
    assert grants[3].lease is None and grants[3].busy and "all 3 slots" in grants[3].why
    assert [h.state for h in pool.health(NOW)] == ["busy", "busy"]
    pool.release(ReleaseRequest(lease_id="l0"), NOW)
    assert pool.grant(_req("h9"), "l9", NOW).lease is not None


def test_a_usage_cap_cools_the_account_and_the_next_lease_goes_elsewhere() -> None:
    pool = _pool(_acct("a"), _acct("b"))
    first = pool.grant(_req(), "l1", NOW).lease
    assert first is not None
    resets = NOW + timedelta(hours=5)
    pool.release(ReleaseRequest(lease_id="l1", cool_until=resets, cause="capped"), NOW)
    second = pool.grant(_req(), "l2", NOW).lease
    assert second is not None and second.account_id != first.account_id
    pool.release(ReleaseRequest(lease_id="l2", cool_until=resets + timedelta(hours=1)), NOW)
    refused = pool.grant(_req(), "l3", NOW)
    assert refused.lease is None and refused.wait_until == resets
    assert "cooling" in refused.why
    assert pool.grant(_req(), "l4", resets).lease is not None  # back when the cap resets
    cooling = {h.id: h for h in pool.health(NOW)}[first.account_id]
    assert (cooling.state, cooling.until, cooling.detail) == ("cooling", resets, "capped")


def test_a_later_cooldown_extends_an_earlier_one_and_a_shorter_one_does_not_cut_it() -> None:
    """Account a is rate-limited until 13:00, then capped until 17:00: it cools until
    17:00 ("capped"), so at 14:00 it still lends nothing. A rate limit until 12:30 after
    that leaves 17:00 as it is. At 17:00 it lends again."""
    pool = _pool(_acct("a", slots=3))
    for n in (1, 2, 3):
        assert pool.grant(_req(f"h{n}"), f"l{n}", NOW).lease is not None
    one, five = NOW + timedelta(hours=1), NOW + timedelta(hours=5)
    pool.release(ReleaseRequest(lease_id="l1", cool_until=one, cause="rate limited"), NOW)
    pool.release(ReleaseRequest(lease_id="l2", cool_until=five, cause="capped"), NOW)
    half = NOW + timedelta(minutes=30)
    pool.release(ReleaseRequest(lease_id="l3", cool_until=half, cause="rate limited"), NOW)
    (health,) = pool.health(NOW)
    assert (health.state, health.until, health.detail) == ("cooling", five, "capped")
    at_two = NOW + timedelta(hours=2)
    refused = pool.grant(_req("h4"), "l4", at_two)
    assert refused.lease is None and refused.wait_until == five
    assert pool.grant(_req("h5"), "l5", five).lease is not None


def test_health_tells_token_low_and_blocked() -> None:
    pool = _pool(
        _acct("low", token_expires_at=NOW + timedelta(minutes=89)),
        _acct("fine", token_expires_at=NOW + timedelta(minutes=91)),
        _acct("expired", token_expires_at=NOW),
        _acct("missing", blocked="variable A_KEY is empty"),
    )
    states = {h.id: h.state for h in pool.health(NOW)}
    assert states == {
        "low": "token-low",
        "fine": "ready",
        "expired": "blocked",
        "missing": "blocked",
    }
    assert pool.grant(_req(), "l1", NOW).lease is not None  # token-low still serves


def test_only_blocked_accounts_refuse_with_the_fix() -> None:
    pool = _pool(_acct("a", blocked="variable A_KEY is empty"))
    grant = pool.grant(_req(), "l1", NOW)
    assert grant.lease is None and grant.wait_until is None
    assert "a: variable A_KEY is empty" in grant.why and "accounts sync" in grant.why


def test_leases_of_vanished_holders_expire_and_others_stay() -> None:
    pool = _pool(_acct("a", slots=2))
    pool.grant(_req("gone"), "l1", NOW)
    pool.grant(_req("alive"), "l2", NOW)
    expired = pool.expire([("gone", "x")])
    assert [x.lease_id for x in expired] == ["l1"]
    assert [x.lease_id for x in pool.leases] == ["l2"]


def test_releasing_twice_is_harmless() -> None:
    pool = _pool(_acct("a"))
    pool.grant(_req(), "l1", NOW)
    assert pool.release(ReleaseRequest(lease_id="l1"), NOW) is not None
    assert pool.release(ReleaseRequest(lease_id="l1"), NOW) is None


def test_asking_again_with_the_same_lease_id_returns_the_same_lease() -> None:
    pool = _pool(_acct("a", slots=2))
    first = pool.grant(_req(), "l1", NOW).lease
    again = pool.grant(_req(), "l1", NOW).lease
    assert first is not None and again == first and len(pool.leases) == 1


def test_a_busy_account_still_says_its_token_expires_soon() -> None:
    pool = _pool(_acct("low", token_expires_at=NOW + timedelta(minutes=30)))
    pool.grant(_req(), "l1", NOW)
    (line,) = pool.health(NOW)
    assert (line.state, line.until, line.detail) == (
        "busy",
        NOW + timedelta(minutes=30),
        "token expires soon",
    )


def test_an_unchecked_sync_keeps_what_a_worker_found_of_the_secrets() -> None:
    pool = _pool(_acct("a", blocked="its secret (variable A_KEY) is missing"))
    pool.set_accounts([_acct("a"), _acct("new")], checked=False)
    assert {a.id: a.blocked for a in pool.state.accounts} == {
        "a": "its secret (variable A_KEY) is missing",
        "new": "",
    }
    pool.set_accounts([_acct("a")], checked=True)  # a worker's sync decides
    assert pool.state.accounts[0].blocked == ""
