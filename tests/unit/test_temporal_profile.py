"""The Temporal connection: the temporal CLI's profile file, TEMPORAL_* variables, ``.env``."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.settings.values import Settings
from runtime.temporal_profile import connect_options, load_settings

_PROFILES = """
[profile.default]
address = "file.example:7233"
namespace = "from-file"

[profile.team]
address = "team.example:7233"
namespace = "team"
api_key = "team-secret-key"
"""


@pytest.fixture(autouse=True)
def clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No Temporal variable of the machine's, a home and working directory of the test's."""
    import os

    for var in list(os.environ):
        if var.startswith("TEMPORAL_"):
            monkeypatch.delenv(var)
    (tmp_path / "empty.toml").write_text("")  # not the machine's own profile file
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(tmp_path / "empty.toml"))
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_without_a_profile_the_embedded_server_is_used() -> None:
    settings = load_settings()
    assert (settings.temporal_address, settings.namespace) == (None, "default")
    assert connect_options(settings) == (False, None, {})


def test_the_profile_file_gives_address_and_namespace_and_variables_override_it(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean / "temporal.toml").write_text(_PROFILES)
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(clean / "temporal.toml"))
    settings = load_settings()
    assert (settings.temporal_address, settings.namespace) == ("file.example:7233", "from-file")
    monkeypatch.setenv("TEMPORAL_PROFILE", "team")
    settings = load_settings()
    assert (settings.temporal_address, settings.namespace) == ("team.example:7233", "team")
    options = connect_options(settings)
    assert (options.tls, options.api_key) == (True, "team-secret-key")  # an API key needs TLS
    assert "team-secret-key" not in settings.model_dump_json()  # kept out of settings
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "ns-env")
    Path(".env").write_text("TEMPORAL_ADDRESS=dotenv.example:7233\nTEMPORAL_NAMESPACE=ns-dotenv\n")
    settings = load_settings()
    assert (settings.temporal_address, settings.namespace) == ("dotenv.example:7233", "ns-env")


def test_a_bad_profile_is_one_clear_error(clean: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (clean / "temporal.toml").write_text(_PROFILES)
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(clean / "temporal.toml"))
    monkeypatch.setenv("TEMPORAL_PROFILE", "nope")
    with pytest.raises(ConfigError, match="'nope' not found.*TEMPORAL_PROFILE"):
        load_settings()
    monkeypatch.delenv("TEMPORAL_PROFILE")
    (clean / "temporal.toml").write_text("[profile.default\n")
    unreadable = r"cannot read the Temporal profile.*temporal\.toml"
    with pytest.raises(ConfigError, match=unreadable) as err:
        load_settings()
    assert "\n" not in str(err.value) and "unclosed table" in str(err.value)
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(clean / "missing.toml"))
    with pytest.raises(ConfigError, match=r"TEMPORAL_CONFIG_FILE names .*missing\.toml"):
        load_settings()


def test_tls_from_durabench_variables_and_the_cli_ones(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = Settings(home=clean, temporal_address="remote.example:7233")
    (clean / "ca.pem").write_bytes(b"CA")
    (clean / "c.pem").write_bytes(b"CERT")
    (clean / "k.pem").write_bytes(b"KEY")
    monkeypatch.setenv("TEMPORAL_TLS_CA", str(clean / "ca.pem"))
    monkeypatch.setenv("TEMPORAL_TLS_CERT", str(clean / "c.pem"))
    monkeypatch.setenv("TEMPORAL_TLS_KEY", str(clean / "k.pem"))
    tls = connect_options(remote).tls
    assert not isinstance(tls, bool)
    assert (tls.server_root_ca_cert, tls.client_cert, tls.client_private_key) == (
        b"CA",
        b"CERT",
        b"KEY",
    )
    monkeypatch.delenv("TEMPORAL_TLS_CERT")
    monkeypatch.delenv("TEMPORAL_TLS_KEY")
    monkeypatch.setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", str(clean / "c.pem"))
    with pytest.raises(ConfigError, match="both a client certificate and its key"):
        connect_options(remote)
    monkeypatch.delenv("TEMPORAL_TLS_CLIENT_CERT_PATH")
    monkeypatch.setenv("TEMPORAL_TLS_CA", str(clean / "missing.pem"))
    with pytest.raises(ConfigError, match="cannot read a Temporal TLS file"):
        connect_options(remote)
    monkeypatch.setenv("TEMPORAL_API_KEY", "k")
    embedded = Settings(home=clean)
    assert connect_options(embedded) == (False, None, {})  # the embedded server is plain
