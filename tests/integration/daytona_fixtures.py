"""Fixtures for the Daytona backend's tests: the stand-in, and options that reach it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from durabench.sandbox.daytona import DaytonaOptions
    from tests.daytona_standin import DaytonaStandIn

__all__ = ["ENDPOINTS_FILE", "daytona_options_for", "record_endpoints", "standin"]

ENDPOINTS_FILE = Path(__file__).resolve().parents[2] / "docs" / "daytona-endpoints.txt"
"""The endpoints the SDK called in the paired run, as the stand-in saw them."""


def record_endpoints(standin: DaytonaStandIn, path: Path) -> None:
    """Write the distinct (method, route) pairs of the SDK's traffic, sorted.

    Only with ``DURABENCH_RECORD_DAYTONA_ENDPOINTS=1``: the file is documentation, kept
    in git, refreshed on purpose.
    """
    if os.environ.get("DURABENCH_RECORD_DAYTONA_ENDPOINTS") != "1":
        return
    seen = sorted(set(standin.traffic))
    path.write_text("".join(f"{method} {route}\n" for method, route in seen))


def daytona_options_for(standin: DaytonaStandIn) -> DaytonaOptions:
    """Options that reach the stand-in, retrying fast."""
    from durabench.sandbox.daytona import DaytonaOptions

    return DaytonaOptions(api_url=standin.url, target="local", backoff_s=0.05)


@pytest.fixture(scope="session")
def standin() -> Iterator[DaytonaStandIn]:
    """One stand-in per session, its key in the environment the SDK reads."""
    pytest.importorskip("daytona", reason="the daytona extra is not installed")
    from tests.daytona_standin import API_KEY, DaytonaStandIn

    mp = pytest.MonkeyPatch()
    mp.setenv("DAYTONA_API_KEY", API_KEY)
    server = DaytonaStandIn()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        mp.undo()
