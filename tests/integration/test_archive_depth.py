"""A real container's tree, read through the daemon, misses no file silently.

``docker-tar`` sends a second name of a file as a link to its first, and skips a file
whose path on the daemon's side is past Linux's path limit; the read keeps both names
and notes the skipped file in ``left_out`` (issue 52, defect 10).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from durabench.sandbox import DockerSandbox, SandboxSpec
from durabench.settings.values import Settings

pytestmark = pytest.mark.docker

PLANT = r"""
import os
os.makedirs("/tmp/w"); os.chdir("/tmp/w")
open("z.txt", "w").write("the work\n")
os.link("z.txt", "a.txt")  # an earlier name: docker-tar sends z.txt as a link to it
for _ in range(40):  # 40 levels of 121 bytes: past 4,096
    os.mkdir("d" * 120); os.chdir("d" * 120)
open("deep.txt", "w").write("deep\n")
"""


@pytest.fixture
async def box(settings: Settings) -> AsyncIterator[DockerSandbox]:
    sb = DockerSandbox(
        SandboxSpec(
            name=f"durabench-depth-{uuid.uuid4().hex[:8]}",
            image=settings.base_image,
            labels={"durabench.run": "archive-depth"},
        )
    )
    await sb.start()
    try:
        yield sb
    finally:
        await sb.stop(delete=True)


async def test_a_hard_link_and_a_file_past_the_path_limit_are_not_lost(
    box: DockerSandbox,
) -> None:
    planted = await box.exec(["python3", "-c", PLANT], user="0")
    assert planted.exit_code == 0, planted
    read = await box.read_tree("/tmp/w")
    assert read.files == {"a.txt": b"the work\n", "z.txt": b"the work\n"}
    (note,) = read.cut  # the first level past the limit: deep.txt is below it
    assert note.startswith("/tmp/w/dddd") and note.endswith(
        "d: its path is past what the daemon reads (4,096 bytes with the container's "
        "root), left out with anything below it"
    )
