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
    prepared = remote_image(on_daytona, task, "Dockerfile", None)
    assert prepared.task_image_id.startswith("durabench-task/")

    builds, sent = standin.builds, len(standin.create_requests)  # type: ignore[attr-defined]
    boxes = [
        daytona.DaytonaSandbox(
            SandboxSpec(name=f"durabench-img-{uuid.uuid4().hex[:8]}", image=prepared.image),
            daytona_options_for(standin),  # type: ignore[arg-type]
        )
        for _ in range(2)
    ]
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
