"""The private parts of temporalio and uvicorn (and h11) that durabench subclasses.

runtime/workflow_runner.py builds on the SDK's sandbox internals, and
durabench/gateway/connections.py on uvicorn's ``H11Protocol`` and ``h11.Connection``.
Their pins hold the minor reviewed here; an upgrade fails these tests until the code is
checked against the new release and the minor below moved with the pin.
"""

from __future__ import annotations

import inspect
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
REVIEWED = {"temporalio": "1.35", "uvicorn": "0.54", "h11": "0.16"}
"""The minor whose private names the subclasses were written against."""


def _minor(text: str) -> str:
    release = Version(text).release
    return f"{release[0]}.{release[1]}"


@pytest.mark.parametrize("name", sorted(REVIEWED))
def test_the_pin_holds_the_reviewed_minor_and_so_does_the_install(name: str) -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    (req,) = [Requirement(r) for r in declared if Requirement(r).name == name]
    (spec,) = req.specifier
    assert (spec.operator, _minor(spec.version)) == ("~=", REVIEWED[name]), req
    assert len(Version(spec.version).release) == 3, f"{req}: ~=X.Y.Z holds the minor"
    assert _minor(version(name)) == REVIEWED[name], f"{name} {version(name)} is installed"


def test_the_sandbox_internals_the_runner_reaches_into_are_there() -> None:
    from temporalio.worker.workflow_sandbox import SandboxRestrictions
    from temporalio.worker.workflow_sandbox._importer import Importer
    from temporalio.worker.workflow_sandbox._restrictions import RestrictionContext
    from temporalio.worker.workflow_sandbox._runner import _Instance

    importer = Importer(SandboxRestrictions.default, RestrictionContext())
    assert callable(importer.applied)
    assert isinstance(importer.new_modules, dict)
    assert isinstance(importer.modules_checked_for_restrictions, set)
    params = list(inspect.signature(_Instance.__init__).parameters)
    assert params[:4] == ["self", "instance_details", "runner_class", "restrictions"], params
    assert callable(_Instance._create_instance)
    assert "self.importer" in inspect.getsource(_Instance.__init__)


def test_the_uvicorn_and_h11_internals_the_gateway_reaches_into_are_there() -> None:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    for method in ("connection_made", "connection_lost", "on_response_complete"):
        assert callable(getattr(H11Protocol, method)), method
    assert list(inspect.signature(H11Protocol.send_400_response).parameters) == ["self", "msg"]
    init = inspect.getsource(H11Protocol.__init__)
    for attribute in ("self.conn", "self.config", "self.cycle", "self.client", "self.server"):
        assert f"{attribute} =" in init or f"{attribute}:" in init, attribute
    assert "self.connections" in init and "self.loop" in init
    assert "h11_max_incomplete_event_size" in inspect.getsource(H11Protocol)
    connection = h11.Connection(h11.SERVER)
    assert connection.their_state is h11.IDLE
    for method in ("receive_data", "next_event", "start_next_cycle"):
        assert callable(getattr(connection, method)), method
