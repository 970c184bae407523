"""Task images on Daytona: built by the service from the task's Dockerfile, once per content."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.backends import remote_image
from durabench.sandbox import SandboxSpec
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.daytona_fixtures import daytona_options_for

pytestmark = pytest.mark.docker
daytona = pytest.importorskip("durabench.sandbox.daytona")


@pytest.fixture
async def closing() -> AsyncIterator[None]:
    yield
    await daytona.close_clients()


def two_sandboxes(standin: object, image: str) -> list[object]:
    """Two attempts' sandboxes of one image."""
    return [
        daytona.DaytonaSandbox(
            SandboxSpec(name=f"durabench-img-{uuid.uuid4().hex[:8]}", image=image),
            daytona_options_for(standin),  # type: ignore[arg-type]
        )
        for _ in range(2)
    ]


async def test_sandboxes_build_from_the_dockerfile_once_per_content(
    standin: object, settings: Settings, tmp_path: Path, closing: None
) -> None:
    """The create sends the task's Dockerfile and its uploaded files, not a local tag;
    two attempts of the same task content build the image once."""
    bundled = load_suite("pytorch")[0]
    task_dir = tmp_path / bundled.task_id
    shutil.copytree(bundled.task_dir, task_dir)
    nonce = uuid.uuid4().hex  # new content: this test's build is never already cached
    (task_dir / "environment" / "tinytensor" / "nonce.txt").write_text(nonce)
    task = bundled.model_copy(update={"task_dir": str(task_dir)})
    on_daytona = settings.model_copy(update={"sandbox": "daytona"})
    prepared = remote_image(on_daytona, task, "Dockerfile", None, tmp_path / "log")
    assert prepared.task_image_id.startswith("durabench-task/")

    builds, sent = standin.builds, len(standin.create_requests)  # type: ignore[attr-defined]
    boxes = two_sandboxes(standin, prepared.image)
    try:
        for box in boxes:
            await box.start()
            seen = await box.read_bytes("/workspace/tinytensor/nonce.txt")
            assert seen.decode() == nonce
    finally:
        for box in boxes:
            await box.stop()

    requests = standin.create_requests[sent:]  # type: ignore[attr-defined]
    assert len(requests) == 2
    for req in requests:
        text = req.build_info.dockerfile_content
        assert f"ARG BASE_IMAGE={settings.base_image}" in text, text
        assert "COPY tinytensor/" in text and "durabench-task/" not in text, text
        assert req.build_info.context_hashes, "the Dockerfile's files were not uploaded"
    assert requests[0].build_info == requests[1].build_info
    assert standin.builds - builds == 1  # type: ignore[attr-defined]
    assert ("GET", "/api/object-storage/push-access") in standin.traffic  # type: ignore[attr-defined]


async def test_an_installed_agent_cli_is_built_onto_the_task_image_once(
    standin: object, settings: Settings, tmp_path: Path, closing: None
) -> None:
    """The worker's npm-installed tools directory is added onto the task's Dockerfile:
    the non-root agent user runs the CLI from PATH, through its ``.bin`` symlink; a second
    attempt of the same task and tools builds nothing."""
    from durabench.agents.base import CliInstall
    from durabench.sandbox.docker.agent_images import _slug

    nonce = uuid.uuid4().hex  # new tools content: never already built
    install = CliInstall(binary="fake-cli", packages=(f"fake-cli@0.0.0-{nonce[:8]}",))
    on_daytona = settings.model_copy(update={"sandbox": "daytona", "home": tmp_path})
    package = on_daytona.agent_tools_dir / _slug(install) / "node_modules" / "fake-cli"
    package.mkdir(parents=True)
    (package / "cli.sh").write_text(f'#!/bin/sh\necho "fake-cli {nonce} as $(id -u)"\n')
    (package / "cli.sh").chmod(0o755)
    (package.parent / ".bin").mkdir()
    (package.parent / ".bin" / "fake-cli").symlink_to("../fake-cli/cli.sh")
    task = load_suite("pytorch")[0]
    prepared = remote_image(on_daytona, task, "Dockerfile", install, tmp_path / "log")

    builds = standin.builds  # type: ignore[attr-defined]
    boxes = two_sandboxes(standin, prepared.image)
    try:
        for box in boxes:
            await box.start()
            ran = await box.exec(["sh", "-c", "fake-cli"], user="1000")
            assert ran.exit_code == 0, ran
            assert ran.stdout.strip() == f"fake-cli {nonce} as 1000"
    finally:
        for box in boxes:
            await box.stop()
    assert standin.builds - builds == 1  # type: ignore[attr-defined]
