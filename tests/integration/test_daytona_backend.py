"""The Daytona backend through the real SDK against the local stand-in of Daytona's API."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from temporalio.client import Client

from durabench.errors import SandboxError
from durabench.sandbox import SandboxSpec
from durabench.settings.values import Settings
from runtime.sweep import remove_remote_orphans
from tests.integration.daytona_fixtures import daytona_options_for

pytestmark = pytest.mark.docker
daytona = pytest.importorskip("durabench.sandbox.daytona")

DEPLOYMENT = "durabench.deployment"


def _spec(settings: Settings, deployment: str = "test") -> SandboxSpec:
    return SandboxSpec(
        name=f"durabench-daytona-{uuid.uuid4().hex[:8]}",
        image=settings.base_image,
        labels={"durabench.run": "r1", "durabench.task": "t", DEPLOYMENT: deployment},
    )


@pytest.fixture
async def closing() -> AsyncIterator[None]:
    yield
    await daytona.close_clients()


async def test_start_reattaches_and_stop_is_idempotent(
    standin: object, settings: Settings, closing: None
) -> None:
    """A second start (a restarted worker) gets the same sandbox; stop twice is fine."""
    opts = daytona_options_for(standin)  # type: ignore[arg-type]
    spec = _spec(settings)
    first = daytona.DaytonaSandbox(spec, opts)
    made = await first.start()
    await first.write_file("/tmp/kept", "here")
    again = daytona.DaytonaSandbox(spec, opts)
    assert await again.start() == made
    assert await again.read_file("/tmp/kept") == "here"
    await first.stop()
    await first.stop()
    with pytest.raises(SandboxError, match="gone"):
        await daytona.DaytonaSandbox(spec, opts).exec(["true"])


async def test_a_sandbox_deleted_by_the_service_is_gone(
    standin: object, settings: Settings, closing: None
) -> None:
    """Deleted under the attempt: the next call says it is gone (an infra failure)."""
    opts = daytona_options_for(standin)  # type: ignore[arg-type]
    spec = _spec(settings)
    sb = daytona.DaytonaSandbox(spec, opts)
    await sb.start()
    standin.delete_under(spec.name)  # type: ignore[attr-defined]
    with pytest.raises(SandboxError, match="gone"):
        await sb.exec(["true"])


async def test_busy_api_is_retried_and_never_makes_a_second_sandbox(
    standin: object, settings: Settings, closing: None
) -> None:
    """429 and 5xx are retried; a create whose answer was lost finds its sandbox by name."""
    opts = daytona_options_for(standin)  # type: ignore[arg-type]
    spec = _spec(settings)
    before = standin.creates  # type: ignore[attr-defined]
    standin.fail("POST", "/api/sandbox", [503], after=True)  # type: ignore[attr-defined]
    standin.fail("POST", "/api/sandbox", [429, 502])  # type: ignore[attr-defined]
    standin.fail("POST", "/toolbox/", [429, 500])  # type: ignore[attr-defined]
    sb = daytona.DaytonaSandbox(spec, opts)
    try:
        made = await sb.start()
        assert (await sb.exec(["echo", "ok"])).stdout == "ok\n"
        assert standin.creates == before + 1  # type: ignore[attr-defined]
        assert made
    finally:
        await sb.stop()


async def test_sweep_lists_only_the_deployments_own(
    standin: object, settings: Settings, closing: None
) -> None:
    """The sweep sees this deployment's sandboxes, not another's, and removes them."""
    opts = daytona_options_for(standin)  # type: ignore[arg-type]
    mine, theirs = _spec(settings, "mine"), _spec(settings, "theirs")
    for spec in (mine, theirs):
        await daytona.DaytonaSandbox(spec, opts).start()
    try:
        listed = await daytona.listed_sandboxes(opts, "mine")
        assert [c.name for c in listed] == [mine.name]
        assert listed[0].run_id == "r1"
        await daytona.remove_sandboxes(opts, [mine.name])
        assert await daytona.listed_sandboxes(opts, "mine") == []
        assert [c.name for c in await daytona.listed_sandboxes(opts, "theirs")] == [theirs.name]
    finally:
        await daytona.DaytonaSandbox(theirs, opts).stop()


async def test_the_sweep_removes_sandboxes_no_running_attempt_owns(
    client: Client,
    standin: object,
    settings: Settings,
    closing: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sandbox of a run Temporal does not know is an orphan; another deployment's is kept."""
    monkeypatch.setenv("DAYTONA_API_URL", standin.url)  # type: ignore[attr-defined]
    opts = daytona.DaytonaOptions.from_env()
    deployment = f"sweep-{uuid.uuid4().hex[:6]}"
    mine, theirs = _spec(settings, deployment), _spec(settings, "someone-else")
    for spec in (mine, theirs):
        await daytona.DaytonaSandbox(spec, opts).start()
    try:
        dry = await remove_remote_orphans(client, deployment, dry_run=True)
        assert [(c.name, orphan) for c, orphan in dry] == [(mine.name, True)]
        assert mine.name in {c.name for c in await daytona.listed_sandboxes(opts, deployment)}
        await remove_remote_orphans(client, deployment)
        assert await daytona.listed_sandboxes(opts, deployment) == []
        assert [c.name for c in await daytona.listed_sandboxes(opts, "someone-else")] == [
            theirs.name
        ]
    finally:
        await daytona.DaytonaSandbox(theirs, opts).stop()
        await daytona.DaytonaSandbox(mine, opts).stop()


async def test_a_detached_launch_whose_answer_was_lost_runs_once(
    standin: object, settings: Settings, closing: None
) -> None:
    """A 5xx after the toolbox started the step: the retry must not start it again."""
    opts = daytona_options_for(standin)  # type: ignore[arg-type]
    sb = daytona.DaytonaSandbox(_spec(settings), opts)
    await sb.start()
    try:
        standin.fail("POST", "/toolbox/", [502], after=True)  # type: ignore[attr-defined]
        await sb.exec_detached(["sh", "-c", "echo ran >> /tmp/launched # tag-q7"])
        running = "grep -l 'tag-q[7]' /proc/[0-9]*/cmdline 2>/dev/null | wc -l"
        while (await sb.exec(["sh", "-c", running])).stdout.strip() != "0":
            pass  # every launch (forked before the toolbox answered) has ended
        assert await sb.read_file("/tmp/launched") == "ran\n"
    finally:
        await sb.stop()
