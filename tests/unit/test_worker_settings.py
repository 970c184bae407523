"""Worker-host settings: sandbox limits, host ids, accounts, the gateway."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.settings.values import Settings, default_max_sandboxes, default_max_verifiers


def test_host_settings_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DURABENCH_MAX_SANDBOXES", "3")
    monkeypatch.setenv("DURABENCH_HOST_TIMEOUT_SEC", "7.5")
    settings = Settings.from_env()
    assert (settings.max_sandboxes, settings.host_timeout_sec) == (3, 7.5)
    kept = settings.host_id
    assert kept == Settings.from_env().host_id  # kept in the home: a restart keeps its queue
    monkeypatch.setenv("DURABENCH_HOST_ID", "rack-7")
    assert Settings.from_env().host_id == "rack-7"
    monkeypatch.setenv("DURABENCH_HOST_ID", "hostname")
    assert Settings.from_env().host_id == socket.gethostname()
    monkeypatch.setenv("DURABENCH_MAX_SANDBOXES", "0")
    with pytest.raises(ConfigError, match="DURABENCH_MAX_SANDBOXES='0'"):
        Settings.from_env()


def test_sandbox_limits_and_accounts_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    for var in (
        "DURABENCH_SANDBOX_MEMORY_MB",
        "DURABENCH_SANDBOX_CPUS",
        "DURABENCH_SANDBOX_PIDS",
        "DURABENCH_USAGE_CAP_COOLDOWN_SEC",
        "DURABENCH_ACCOUNTS_FILE",
    ):
        monkeypatch.delenv(var, raising=False)
    default = Settings.from_env()
    assert (default.sandbox_memory_mb, default.sandbox_cpus, default.sandbox_pids) == (
        4096,
        2.0,
        1024,
    )
    assert default.usage_cap_cooldown_sec == 3600.0
    assert default.accounts_file == tmp_path / "accounts.toml"
    monkeypatch.setenv("DURABENCH_SANDBOX_MEMORY_MB", "512")
    monkeypatch.setenv("DURABENCH_SANDBOX_CPUS", "0.5")
    monkeypatch.setenv("DURABENCH_SANDBOX_PIDS", "64")
    monkeypatch.setenv("DURABENCH_USAGE_CAP_COOLDOWN_SEC", "90")
    monkeypatch.setenv("DURABENCH_ACCOUNTS_FILE", str(tmp_path / "team" / "acc.toml"))
    custom = Settings.from_env()
    assert (custom.sandbox_memory_mb, custom.sandbox_cpus, custom.sandbox_pids) == (512, 0.5, 64)
    assert custom.usage_cap_cooldown_sec == 90.0
    assert custom.accounts_file == tmp_path / "team" / "acc.toml"
    for var, bad in (
        ("DURABENCH_SANDBOX_PIDS", "0"),
        ("DURABENCH_SANDBOX_CPUS", "many"),
        ("DURABENCH_USAGE_CAP_COOLDOWN_SEC", "-1"),
    ):
        monkeypatch.setenv(var, bad)
        with pytest.raises(ConfigError, match=f"{var}='{bad}'"):
            Settings.from_env()
        monkeypatch.delenv(var)


def test_default_sandboxes_follow_memory_not_cpus() -> None:
    """Agents mostly wait on a model API: the count is a ceiling by memory, not by CPUs.

    A sandbox per 64 MiB: 23.5 GiB gives 376 (24,064 ÷ 64); memory admission, measured,
    decides below it.
    """
    assert default_max_sandboxes(host_memory=24064) == 376
    assert default_max_sandboxes(host_memory=32) == 1  # always at least one


def test_the_default_count_is_not_the_sandbox_memory_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory limit is a ceiling Docker does not reserve: it no longer sets the count."""
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DURABENCH_SANDBOX_MEMORY_MB", "1024")
    small = Settings.from_env().max_sandboxes
    monkeypatch.setenv("DURABENCH_SANDBOX_MEMORY_MB", "8192")
    large = Settings.from_env().max_sandboxes
    assert small == large == default_max_sandboxes()


def test_the_gateway_settings_are_read_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    settings = Settings.from_env()
    assert (settings.gateway_network, settings.gateway_port) == ("durabench-models", 8719)
    assert settings.gateway_budget_tokens is None
    monkeypatch.setenv("DURABENCH_GATEWAY_NETWORK", "models-b")
    monkeypatch.setenv("DURABENCH_GATEWAY_PORT", "9001")
    monkeypatch.setenv("DURABENCH_BUDGET_TOKENS", "500000")
    settings = Settings.from_env()
    assert (settings.gateway_network, settings.gateway_port) == ("models-b", 9001)
    assert settings.gateway_budget_tokens == 500_000
    monkeypatch.setenv("DURABENCH_BUDGET_TOKENS", "-3")
    with pytest.raises(ConfigError, match="DURABENCH_BUDGET_TOKENS='-3'"):
        Settings.from_env()


def test_verifiers_have_a_smaller_limit_by_cpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verifiers are CPU-bound: as many at once as the CPUs hold sandboxes' CPU limits."""
    assert default_max_verifiers(2.0, host_cpus=2) == 1
    assert default_max_verifiers(0.5, host_cpus=8) == 16
    assert default_max_verifiers(4.0, host_cpus=2) == 1  # always at least one
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DURABENCH_SANDBOX_CPUS", "1")
    assert Settings.from_env().max_verifiers == default_max_verifiers(1.0)
    monkeypatch.setenv("DURABENCH_MAX_VERIFIERS", "3")
    assert Settings.from_env().max_verifiers == 3
    monkeypatch.setenv("DURABENCH_MAX_VERIFIERS", "0")
    with pytest.raises(ConfigError, match="DURABENCH_MAX_VERIFIERS='0'"):
        Settings.from_env()
