"""Fixtures for the Daytona backend's tests: the stand-in, and options that reach it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from durabench.sandbox.daytona import DaytonaOptions
    from tests.daytona_standin import DaytonaStandIn

__all__ = ["daytona_options_for", "standin"]


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
