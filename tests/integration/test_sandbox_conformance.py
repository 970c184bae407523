"""Every sandbox backend passes the shared conformance checks."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from durabench.attempt import remove_sandbox
from durabench.errors import SandboxError, SandboxGone
from durabench.sandbox import Sandbox, SandboxSpec, get_backend, known_backends
from durabench.sandbox.conformance import CHECKS
from durabench.settings.values import Settings

pytestmark = pytest.mark.docker

KNOWN_FAILURES: dict[tuple[str, str], str] = {}
"""(backend, check) pairs expected to fail, with the reason."""


@pytest.fixture(params=known_backends())
async def sandbox(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[Sandbox]:
    spec = SandboxSpec(
        name=f"durabench-conformance-{uuid.uuid4().hex[:8]}",
        image=settings.base_image,
        labels={"durabench.run": "conformance"},
        tmpfs={"/logs/conformance": 16},  # trees are read there too (conformance._bases)
    )
    if request.param == "daytona":  # the real SDK against the local stand-in of Daytona
        from tests.integration.daytona_fixtures import daytona_options_for

        options = daytona_options_for(request.getfixturevalue("standin"))
        sb: Sandbox = get_backend("daytona")(spec, options)  # type: ignore[call-arg]
    else:
        sb = get_backend(request.param)(spec)
    await sb.start()
    if request.param == "docker":  # found by name, as each activity's sandbox is: with
        sb = get_backend("docker")(spec)  # its inspect data, a volume is read on the host
    try:
        yield sb
    finally:
        await sb.stop(delete=True)


def _backend_like(sb: Sandbox, spec: SandboxSpec) -> Sandbox:
    """A sandbox of ``sb``'s backend (with its options) for ``spec``."""
    options = getattr(sb, "options", None)
    if options is not None:
        return type(sb)(spec, options)  # type: ignore[call-arg]
    return type(sb)(spec)


async def test_a_handle_by_name_alone_removes_the_sandbox_and_cannot_start_one(
    sandbox: Sandbox,
) -> None:
    """Removal needs the sandbox's name alone: the task behind it may be gone since."""
    handle = _backend_like(sandbox, SandboxSpec(name=sandbox.spec.name))
    await remove_sandbox(handle)
    with pytest.raises(SandboxError, match="gone"):  # looked up afresh: not there
        await _backend_like(sandbox, SandboxSpec(name=sandbox.spec.name)).exec(["true"])
    await remove_sandbox(handle)  # one already gone is fine
    with pytest.raises(SandboxError, match="names no image"):
        await handle.start()


@pytest.mark.parametrize("check", sorted(CHECKS))
async def test_conformance(sandbox: Sandbox, check: str, request: pytest.FixtureRequest) -> None:
    backend = request.node.callspec.params["sandbox"]
    reason = KNOWN_FAILURES.get((backend, check))
    if reason:
        pytest.xfail(reason)
    await CHECKS[check](sandbox)


async def test_stop_is_idempotent_and_removes(settings: Settings) -> None:
    spec = SandboxSpec(
        name=f"durabench-conformance-{uuid.uuid4().hex[:8]}", image=settings.base_image
    )
    sb = get_backend("docker")(spec)
    await sb.start()
    await sb.stop(delete=True)
    await sb.stop(delete=True)
    with pytest.raises(SandboxError, match="gone"):
        await sb.exec(["true"])


async def test_start_reattaches_to_a_container_of_the_same_name(settings: Settings) -> None:
    """A restarted worker starts an attempt's sandbox again: it gets the same container."""
    spec = SandboxSpec(
        name=f"durabench-conformance-{uuid.uuid4().hex[:8]}", image=settings.base_image
    )
    first = get_backend("docker")(spec)
    made = await first.start()
    try:
        await first.write_file("/tmp/kept", "here")
        again = get_backend("docker")(spec)
        assert await again.start() == made
        await again.stop(delete=False)  # stopped, not removed: start runs it again
        assert await get_backend("docker")(spec).start() == made
        assert (await first.exec(["cat", "/tmp/kept"])).stdout == "here"
    finally:
        await first.stop(delete=True)


async def test_an_exec_into_a_stopped_container_is_gone_not_retried(settings: Settings) -> None:
    """A stopped container answers every exec 409: nothing will run in it again, so the
    step that asked ends at once (``SandboxGone``, not retried), rather than retry for
    hours as if Docker had hiccupped (an empty base image's container stops at once)."""
    spec = SandboxSpec(
        name=f"durabench-conformance-{uuid.uuid4().hex[:8]}", image=settings.base_image
    )
    box = get_backend("docker")(spec)
    await box.start()
    try:
        await box.stop(delete=False)  # its main process ended
        with pytest.raises(SandboxGone, match="stopped"):
            await box.exec(["true"])
    finally:
        await box.stop(delete=True)
