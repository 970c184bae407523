"""The CLI connects where the ``temporal`` CLI's profile file says, with no TEMPORAL_ADDRESS."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.starter_cli import one_error

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def decoy_port() -> Iterator[int]:
    """A port where something that is not Temporal listens: the embedded server's port.

    Were the profile ignored, the CLI would look for its embedded server there and fail,
    instead of starting a server of its own.
    """
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def _status(
    home: Path, profile_file: Path, port: int, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}
    env |= {
        "DURABENCH_HOME": str(home),
        "DURABENCH_PORT": str(port),
        "TEMPORAL_CONFIG_FILE": str(profile_file),
        **extra,
    }
    return subprocess.run(
        [sys.executable, "-m", "starter", "status"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_cli_uses_the_profile_files_address_and_namespace(
    temporal_address: str, tmp_path: Path, decoy_port: int
) -> None:
    profile_file = tmp_path / "temporal.toml"
    profile_file.write_text(
        f'[profile.default]\naddress = "{temporal_address}"\nnamespace = "default"\n\n'
        f'[profile.elsewhere]\naddress = "{temporal_address}"\nnamespace = "no-such-ns-4b1"\n'
    )
    listed = _status(tmp_path / "home", profile_file, decoy_port)
    assert listed.returncode == 0, listed.stderr
    assert not (tmp_path / "home" / "temporal.db").exists()  # no embedded server started
    refused = one_error(
        _status(tmp_path / "home", profile_file, decoy_port, TEMPORAL_PROFILE="elsewhere")
    )
    assert f"cannot use Temporal at {temporal_address} (namespace no-such-ns-4b1)" in refused
