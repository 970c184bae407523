"""The Daytona backend's pure parts: its exec script's output, and the remote gateway's checks."""

from __future__ import annotations

import base64

import pytest

from durabench.errors import ConfigError

scripts = pytest.importorskip("durabench.sandbox.daytona.scripts")
remote = pytest.importorskip("durabench.sandbox.daytona.remote_gateway")


def test_exec_output_keeps_streams_apart_and_reads_timeouts() -> None:
    out = base64.b64encode(b"o\n").decode()
    err = base64.b64encode(b"e\n").decode()
    done = scripts.parse_exec(f"{out}\n{err}\n124\n", timeout_s=1, elapsed_s=2)
    assert (done.stdout, done.stderr, done.exit_code, done.timed_out) == ("o\n", "e\n", 124, True)
    with pytest.raises(ValueError):
        scripts.parse_exec("agent noise", timeout_s=None, elapsed_s=0)


def test_exec_script_drops_to_the_user_and_hides_nothing_in_clear() -> None:
    script = scripts.exec_script(["id"], user="agent", env={"K": "v w"})
    assert "setpriv" in script.command and "export K=" in script.command


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://203.0.113.7:8443", True),
        ("http://10.1.2.3:8719", True),
        ("http://93.184.215.14:8719", False),
        ("ftp://10.1.2.3", False),
        (None, False),
    ],
)
def test_public_gateway_url_needs_tls_off_private_networks(url: str | None, ok: bool) -> None:
    if ok:
        assert remote.checked_public_url(url) == url
    else:
        with pytest.raises(ConfigError):
            remote.checked_public_url(url)


def test_allow_list_is_the_gateways_address_alone() -> None:
    assert remote.allow_list_for("https://203.0.113.7:8443/x") == "203.0.113.7/32"
