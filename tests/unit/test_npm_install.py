"""npm's own words reach build.log as it runs and the error as soon as npm has failed.

Seen behind a TLS-inspecting proxy: npm retried each package for about 70 s, build.log
held one line, and the worker waited out its 900 s timeout before saying "failed". A stand-in
``npm`` on PATH plays those outputs here (no registry, no network).
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from durabench.agents.base import CliInstall
from durabench.errors import ImageBuildError
from durabench.sandbox.docker.agent_images import install_tools

INSTALL = CliInstall(binary="claude", packages=("@anthropic-ai/claude-code@2.1.332",))
URL = "https://registry.npmjs.org/@anthropic-ai%2fclaude-code"


def _fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\n" + script)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return tmp_path / "build.log"


def test_a_certificate_npm_retries_in_vain_stops_the_install_with_npm_s_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # npm at --loglevel http says each failed attempt, then retries for minutes.
    log = _fake_npm(
        tmp_path,
        monkeypatch,
        f'echo "npm http fetch GET {URL} attempt 1 failed with SELF_SIGNED_CERT_IN_CHAIN" >&2\n'
        "sleep 120\n"
        "exit 1\n",
    )
    with pytest.raises(ImageBuildError) as err:
        install_tools(INSTALL, tmp_path / "cache", log)
    said = str(err.value)
    assert "SELF_SIGNED_CERT_IN_CHAIN" in said and str(log) in said
    assert "NODE_EXTRA_CA_CERTS" in said  # what to do about it
    assert "attempt 1 failed with SELF_SIGNED_CERT_IN_CHAIN" in log.read_text()
    assert not list((tmp_path / "cache").glob(".installing-*"))  # nothing half done is kept


def test_npm_s_error_lines_are_the_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _fake_npm(
        tmp_path,
        monkeypatch,
        'echo "npm error code E404" >&2\n'
        f'echo "npm error 404 Not Found - GET {URL} - Not found" >&2\n'
        "exit 1\n",
    )
    with pytest.raises(ImageBuildError) as err:
        install_tools(INSTALL, tmp_path / "cache", log)
    said = str(err.value)
    assert "npm error code E404" in said and "404 Not Found - GET" in said
    assert "npm error code E404" in log.read_text()


def test_npm_is_asked_to_say_what_it_fetches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _fake_npm(tmp_path, monkeypatch, 'echo "argv: $*"\nexit 1\n')
    with pytest.raises(ImageBuildError):
        install_tools(INSTALL, tmp_path / "cache", log)
    assert "--loglevel=http" in log.read_text()  # each fetch and failed attempt, as it happens


def test_an_npm_that_never_ends_is_stopped_at_the_timeout_with_its_last_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("durabench.sandbox.docker.agent_images._NPM_TIMEOUT_S", 0.5)
    log = _fake_npm(tmp_path, monkeypatch, f'echo "npm http fetch GET {URL}"\nsleep 120\n')
    with pytest.raises(ImageBuildError) as err:
        install_tools(INSTALL, tmp_path / "cache", log)
    said = str(err.value)
    assert "did not finish within" in said and f"npm http fetch GET {URL}" in said
